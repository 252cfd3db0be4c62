#include "host/backend.h"

#include <stdio.h>
#include <string.h>

static const char *const backend_names[BACKEND_COUNT] = {"auto", "sm90", "sm100", "emu"};
static const char *const init_names[INIT_COUNT] = {"rand", "int", "ramp", "ones"};

const char *backend_name(backend_t b) { return (b >= 0 && b < BACKEND_COUNT) ? backend_names[b] : "?"; }
const char *init_name(init_t i) { return (i >= 0 && i < INIT_COUNT) ? init_names[i] : "?"; }

int backend_available(backend_t b, const gpu_info *g, char *why, size_t len)
{
    switch (b) {
    case BACKEND_EMU:
        return 1;
    case BACKEND_SM90:
    case BACKEND_SM100: {
        int want_major = b == BACKEND_SM90 ? 9 : 10;
        if (!g->present) {
            snprintf(why, len, "backend %s needs a CC %d.0 GPU; none here (%s)", backend_name(b),
                     want_major, g->why_absent);
            return 0;
        }
        if (g->cc_major != want_major || g->cc_minor != 0) {
            snprintf(why, len, "backend %s needs a CC %d.0 GPU (sm_%d0a code); this GPU is %s, CC %d.%d",
                     backend_name(b), want_major, want_major, g->name, g->cc_major, g->cc_minor);
            return 0;
        }
        return 1;
    }
    default:
        snprintf(why, len, "no such backend");
        return 0;
    }
}

static void list_implemented(unsigned implemented, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int b = BACKEND_SM90; b < BACKEND_COUNT; b++)
        if (implemented & BACKEND_BIT(b))
            used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "",
                                     backend_name((backend_t)b));
}

int backend_select(backend_t requested, unsigned implemented, const gpu_info *g, backend_t *chosen,
                   char *msg, size_t len)
{
    char impl[64];
    list_implemented(implemented, impl, sizeof impl);
    if (requested == BACKEND_AUTO) {
        const backend_t order[] = {BACKEND_SM100, BACKEND_SM90, BACKEND_EMU};
        for (int i = 0; i < 3; i++) {
            char why[256];
            if ((implemented & BACKEND_BIT(order[i])) && backend_available(order[i], g, why, sizeof why)) {
                *chosen = order[i];
                return 0;
            }
        }
        snprintf(msg, len, "--backend auto: no implemented backend (%s) can run here", impl);
        return 77;
    }
    if (!(implemented & BACKEND_BIT(requested))) {
        snprintf(msg, len, "--backend %s: this stage implements only %s", backend_name(requested), impl);
        return 2;
    }
    if (!backend_available(requested, g, msg, len)) return 77;
    *chosen = requested;
    return 0;
}
