#!/usr/bin/env bash
# Bundle Criterion's headers and runtime libraries into one folder (default .criterion-rt) so that
# `make test CRITERION_HOME=<folder>` builds and runs on a machine where Criterion is not installed
# (the GPU machine). It copies libcriterion and every shared library it needs except the C runtime.
set -euo pipefail
dst=${1:-.criterion-rt}
lib=$(ldconfig -p | awk '/libcriterion\.so\.3 /{print $NF; exit}')
if [ -z "$lib" ] || [ ! -f /usr/include/criterion/criterion.h ]; then
  echo "criterion_bundle: libcriterion-dev is not installed here (run make deps)" >&2
  exit 1
fi
rm -rf "$dst"; mkdir -p "$dst/lib" "$dst/include"
cp -r /usr/include/criterion "$dst/include/"
cp -L "$lib" "$dst/lib/libcriterion.so.3"
ln -s libcriterion.so.3 "$dst/lib/libcriterion.so"
# Only the dependencies that a CUDA image usually lacks; the system ones (libc, libz, libcrypto,
# Kerberos, ...) stay the machine's own, so no older copy shadows them.
ldd "$lib" | awk '/=> \//{print $3}' | while read -r dep; do
  case "$(basename "$dep")" in
    libgit2*|libnanomsg*|libmbedtls*|libmbedx509*|libmbedcrypto*|libhttp_parser*|libssh2*)
      cp -L "$dep" "$dst/lib/" ;;
  esac
done
echo "criterion_bundle: $(ls "$dst/lib" | wc -l) libraries in $dst/lib ($(du -sh "$dst" | cut -f1))"
