// libnice + GLib for Swift. g_signal_connect, G_CALLBACK and friends are macros and
// g_object_set/get are variadic, so they reach Swift through typed wrappers here.
// GLib's g_timeout_add/g_idle_add attach to the default context; ours attach to a
// given context so that each loop thread owns its own sources.
#ifndef BEDRUD_CNICE_SHIM_H
#define BEDRUD_CNICE_SHIM_H
#include <nice/agent.h>
#include <glib.h>
#include <glib-object.h>
#include <sys/prctl.h>

typedef void (*shim_state_changed_cb)(NiceAgent *agent, guint stream_id, guint component_id, guint state, gpointer user_data);
typedef void (*shim_gathering_done_cb)(NiceAgent *agent, guint stream_id, gpointer user_data);
typedef void (*shim_new_candidate_full_cb)(NiceAgent *agent, NiceCandidate *candidate, gpointer user_data);
typedef void (*shim_new_selected_pair_full_cb)(NiceAgent *agent, guint stream_id, guint component_id, NiceCandidate *lcand, NiceCandidate *rcand, gpointer user_data);

static inline gulong shim_on_component_state_changed(NiceAgent *a, shim_state_changed_cb cb, gpointer ud) {
    return g_signal_connect(a, "component-state-changed", G_CALLBACK(cb), ud);
}
static inline gulong shim_on_candidate_gathering_done(NiceAgent *a, shim_gathering_done_cb cb, gpointer ud) {
    return g_signal_connect(a, "candidate-gathering-done", G_CALLBACK(cb), ud);
}
static inline gulong shim_on_new_candidate_full(NiceAgent *a, shim_new_candidate_full_cb cb, gpointer ud) {
    return g_signal_connect(a, "new-candidate-full", G_CALLBACK(cb), ud);
}
static inline gulong shim_on_new_selected_pair_full(NiceAgent *a, shim_new_selected_pair_full_cb cb, gpointer ud) {
    return g_signal_connect(a, "new-selected-pair-full", G_CALLBACK(cb), ud);
}
static inline void shim_signal_disconnect(gpointer instance, gulong handler) { g_signal_handler_disconnect(instance, handler); }

static inline void shim_set_bool(gpointer obj, const char *prop, gboolean v) { g_object_set(obj, prop, v, NULL); }
static inline void shim_set_uint(gpointer obj, const char *prop, guint v) { g_object_set(obj, prop, v, NULL); }
static inline void shim_set_string(gpointer obj, const char *prop, const char *v) { g_object_set(obj, prop, v, NULL); }
static inline gboolean shim_get_bool(gpointer obj, const char *prop) { gboolean v = 0; g_object_get(obj, prop, &v, NULL); return v; }
static inline guint shim_get_uint(gpointer obj, const char *prop) { guint v = 0; g_object_get(obj, prop, &v, NULL); return v; }

/// Adds a timeout source to `ctx` (not the default context). Returns its id for shim_source_remove.
static inline guint shim_timeout_add(GMainContext *ctx, guint interval_ms, GSourceFunc fn, gpointer data, GDestroyNotify notify) {
    GSource *s = g_timeout_source_new(interval_ms);
    g_source_set_callback(s, fn, data, notify);
    guint id = g_source_attach(s, ctx);
    g_source_unref(s);
    return id;
}
/// Adds an idle source to `ctx`; used to run work on the loop thread.
static inline guint shim_idle_add(GMainContext *ctx, GSourceFunc fn, gpointer data, GDestroyNotify notify) {
    GSource *s = g_idle_source_new();
    g_source_set_priority(s, G_PRIORITY_DEFAULT);
    g_source_set_callback(s, fn, data, notify);
    guint id = g_source_attach(s, ctx);
    g_source_unref(s);
    return id;
}
static inline void shim_source_remove(GMainContext *ctx, guint id) {
    GSource *s = g_main_context_find_source_by_id(ctx, id);
    if (s) g_source_destroy(s);
}
static inline void shim_g_free(gpointer p) { g_free(p); }

// --- BedrudRTC additions -------------------------------------------------------------
/// Names the calling thread for the kernel (/proc/PID/task/TID/comm, perf, top -H): at most
/// 15 bytes are kept. Foundation's Thread.name does not reach the kernel on Linux.
static inline void shim_set_thread_name(const char *name) { prctl(PR_SET_NAME, (unsigned long)name, 0, 0, 0); }
/// nice_agent_new_full with RFC 5245 compatibility; `flags` is an OR of NICE_AGENT_OPTION_*
/// values passed as a plain guint so Swift needs no enum casts.
static inline NiceAgent *shim_nice_agent_new(GMainContext *ctx, guint flags) {
    return nice_agent_new_full(ctx, NICE_COMPATIBILITY_RFC5245, (NiceAgentOption)flags);
}
static inline void shim_g_object_unref(gpointer obj) { g_object_unref(obj); }
/// Frees a GSList of NiceCandidate* as returned by nice_agent_get_local_candidates.
static inline void shim_slist_free_candidates(GSList *list) { g_slist_free_full(list, (GDestroyNotify)nice_candidate_free); }
/// True when the calling thread owns (is iterating) `ctx`.
static inline gboolean shim_context_is_owner(GMainContext *ctx) { return g_main_context_is_owner(ctx); }
/// Parses one `a=candidate:…` line and adds it to component `component` of `stream`.
/// Returns the number of candidates added (0 or 1), or -1 if libnice could not parse the
/// line or it names another component.
static inline int shim_add_remote_candidate_sdp(NiceAgent *agent, guint stream, guint component, const char *line) {
    NiceCandidate *c = nice_agent_parse_remote_candidate_sdp(agent, stream, line);
    if (!c) return -1;
    if (c->component_id != component) { nice_candidate_free(c); return -1; }
    GSList *list = g_slist_append(NULL, c);
    int n = nice_agent_set_remote_candidates(agent, stream, component, list);
    g_slist_free(list);
    nice_candidate_free(c);
    return n;
}
static inline const char *shim_candidate_type_name(NiceCandidateType t) {
    switch (t) {
    case NICE_CANDIDATE_TYPE_HOST: return "host";
    case NICE_CANDIDATE_TYPE_SERVER_REFLEXIVE: return "srflx";
    case NICE_CANDIDATE_TYPE_PEER_REFLEXIVE: return "prflx";
    case NICE_CANDIDATE_TYPE_RELAYED: return "relay";
    default: return "unknown";
    }
}
static inline const char *shim_candidate_transport_name(NiceCandidateTransport t) {
    return t == NICE_CANDIDATE_TRANSPORT_UDP ? "udp" : "tcp";
}
/// Writes "ip:port type/transport" of `c` into `out` (at least 96 bytes).
static inline void shim_candidate_describe(const NiceCandidate *c, char *out, size_t n) {
    char ip[NICE_ADDRESS_STRING_LEN];
    nice_address_to_string(&c->addr, ip);
    g_snprintf(out, n, "%s:%u %s/%s", ip, nice_address_get_port(&c->addr),
               shim_candidate_type_name(c->type), shim_candidate_transport_name(c->transport));
}
/// Describes the selected pair as "local <-> remote"; returns FALSE when none is selected.
static inline gboolean shim_selected_pair_describe(NiceAgent *agent, guint stream, guint component, char *out, size_t n) {
    NiceCandidate *l = NULL, *r = NULL;
    if (!nice_agent_get_selected_pair(agent, stream, component, &l, &r) || !l || !r) return FALSE;
    char a[128], b[128];
    shim_candidate_describe(l, a, sizeof(a));
    shim_candidate_describe(r, b, sizeof(b));
    g_snprintf(out, n, "%s <-> %s", a, b);
    return TRUE;
}
#endif
