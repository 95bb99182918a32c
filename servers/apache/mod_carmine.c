/*
 * mod_carmine: Ruby (Carmine, through libcarmine's carmine.h) in the request phases of
 * Apache httpd 2.4, in the conventions of mod_mruby.
 *
 *   LoadModule carmine_module modules/mod_carmine.so
 *   carmineHandler /path/to/handler.rb            # or carmineHandlerCode 'Apache.echo "hi"'
 *
 * Invariants:
 * - VMs live in a pool per server process, made in child_init when the process starts
 *   (as mod_mruby does: no request pays for it, and the process's memory is there from
 *   the start): as many as the pool's bound, or one when it is unbounded. A phase claims
 *   a free VM (an atomic exchange on its slot, no lock), or makes one when none is free
 *   and the pool is below its bound, runs its script and puts it back, so a VM is used by
 *   one thread at a time. The bound, `carmineMaxVMs N`, is by default the number of
 *   online CPUs (a VM runs one script on one core; scripts that wait on the network hold
 *   their VM and want more); 0 lifts it (as many VMs as scripts ever ran at once). A phase
 *   that finds none free waits. The pool's lock is taken only by a phase that finds no
 *   VM free and by a release while one waits, never around a run.
 * - Only the phases some directive gave a script have their hook registered (by that
 *   directive, at configuration time): the other phases cost a request nothing.
 * - A script is compiled once per VM and reused; a script file is recompiled when its
 *   mtime, size or inode changes (servers/common/carmine_host.h). The files are watched
 *   with inotify by one thread of the parent process (`watcher`, started in post_config),
 *   which counts each change in a page shared with the children (`shared_watch`); a
 *   phase uses a file script without a stat unless the count moved or a second passed
 *   since its VM last stat'ed it. The count is one word written by that thread alone
 *   and read atomically by the VMs: no lock.
 * - Each phase runs its script with carmine_run: an isolated unit whose globals, constants,
 *   top-level methods and `$!` are gone afterwards. The Apache::* classes are made by the
 *   host when the VM is created and persist; so does what `carmineInit` scripts define.
 * - The running request is reached through the VM's userdata (a vm_slot whose `cur` is
 *   set only while a phase runs): Ruby objects never hold request_rec pointers, so a
 *   request object kept past its request raises instead of touching freed memory.
 * - A script that raises, does not compile, or hits a limit makes the phase return 500 and
 *   logs its report (class, message, backtrace) to the error log, one line per entry; the
 *   VM stays usable. A VM that reports an internal error (CARMINE_BUG) is closed; its slot
 *   gets a new VM at its next use.
 */
#include <errno.h>
#include <malloc.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>
#include <string.h>
#include <stddef.h>
#include <sys/eventfd.h>
#include <sys/mman.h>

#include "httpd.h"
#include "http_config.h"
#include "http_core.h"
#include "http_log.h"
#include "http_protocol.h"
#include "http_request.h"
#include "ap_release.h"
#include "apr_strings.h"
#include "apr_tables.h"

#include "carmine.h"
#include "carmine_host.h"

module AP_MODULE_DECLARE_DATA carmine_module;
APLOG_USE_MODULE(carmine);

#define MOD_CARMINE_VERSION "0.1.0"
#define DEFAULT_MALLOC_ARENAS 2

/* ---- configuration ------------------------------------------------------------------ */

enum phase {
    PHASE_POST_READ_REQUEST,
    PHASE_TRANSLATE_NAME,
    PHASE_MAP_TO_STORAGE,
    PHASE_ACCESS_CHECKER,
    PHASE_CHECK_USER_ID,
    PHASE_AUTH_CHECKER,
    PHASE_FIXUPS,
    PHASE_HANDLER,
    PHASE_LOG_TRANSACTION,
    PHASE_COUNT
};

typedef struct dir_conf {
    carmine_code *code[PHASE_COUNT];
    int count; /* phases with code */
} dir_conf;

typedef struct srv_conf {
    carmine_code *init;   /* carmineInit: run shared (not isolated) when a VM is created */
    apr_int64_t timeout_ms; /* carmineTimeout; 0 = none */
    apr_int64_t mem_limit;  /* carmineMemoryLimit in bytes; 0 = none */
    apr_int64_t max_vms;    /* carmineMaxVMs per process; 0 = as many as run at once, -1 (unset) = CPUs */
    apr_int64_t gc_malloc_limit; /* carmineGCMallocLimit in bytes; -1 (unset) = CARMINE_HOST_GC_MALLOC_LIMIT */
    apr_int64_t gc_every;   /* carmineGCEvery: a full collection after that many runs; 0 = none */
    apr_int64_t malloc_arenas; /* carmineMallocArenas: glibc's M_ARENA_MAX for the children; 0 = glibc's, -1 (unset) = 2 */
} srv_conf;

static void *create_dir_conf(apr_pool_t *p, char *dir)
{
    (void)dir;
    return apr_pcalloc(p, sizeof(dir_conf));
}

/* A nested scope inherits each phase it does not set. Apache merges per request (for
 * each <Location> that applies), so a scope that sets nothing, or inherits nothing, is
 * the other one as it is: no copy. */
static void *merge_dir_conf(apr_pool_t *p, void *base_, void *add_)
{
    dir_conf *base = base_, *add = add_;
    if (base->count == 0)
        return add;
    if (add->count == 0)
        return base;
    dir_conf *m = apr_pcalloc(p, sizeof *m);
    for (int i = 0; i < PHASE_COUNT; i++) {
        m->code[i] = add->code[i] ? add->code[i] : base->code[i];
        m->count += m->code[i] != NULL;
    }
    return m;
}

static void *create_srv_conf(apr_pool_t *p, server_rec *s)
{
    (void)s;
    srv_conf *sc = apr_pcalloc(p, sizeof(srv_conf));
    sc->max_vms = -1;
    sc->gc_malloc_limit = -1;
    sc->malloc_arenas = -1;
    return sc;
}

/* Whether any directive gave mod_carmine a script: only then are VMs made in child_init.
 * phase_used: whether any scope has a script for the phase. Only those phases' hooks are
 * registered (by the first directive of the phase, see hook_phase), so a request pays
 * nothing in the phases no script uses. Both are reset when Apache registers the
 * module's hooks again (each time it reads its configuration). */
static int has_scripts;
static char phase_used[PHASE_COUNT];
/* Every script of the configuration (carmine_code * in the config pool), reset with
 * has_scripts: each VM made in child_init compiles them all there, and the parent's
 * watcher watches the files among them. */
static apr_array_header_t *script_codes;

static void add_code(cmd_parms *cmd, carmine_code *c)
{
    if (script_codes == NULL)
        script_codes = apr_array_make(cmd->pool, 4, sizeof(carmine_code *));
    APR_ARRAY_PUSH(script_codes, carmine_code *) = c;
}

static void hook_phase(int phase);

static carmine_code *code_from_file(cmd_parms *cmd, const char *path)
{
    carmine_code *c = apr_pcalloc(cmd->pool, sizeof *c);
    c->index = carmine_code_next_index();
    c->is_file = 1;
    c->path = ap_server_root_relative(cmd->pool, path);
    add_code(cmd, c);
    return c;
}

static carmine_code *code_inline(cmd_parms *cmd, const char *src)
{
    carmine_code *c = apr_pcalloc(cmd->pool, sizeof *c);
    c->index = carmine_code_next_index();
    c->is_file = 0;
    c->path = apr_psprintf(cmd->pool, "%s:%d", cmd->directive->filename, cmd->directive->line_num);
    c->src = src;
    c->len = strlen(src);
    add_code(cmd, c);
    return c;
}

/* cmd->info packs the phase and whether the argument is inline code (bit 8). */
#define INLINE_CODE 0x100

static const char *set_phase(cmd_parms *cmd, void *dc_, const char *arg)
{
    dir_conf *dc = dc_;
    int info = (int)(intptr_t)cmd->info;
    int phase = info & 0xff;
    if (phase <= PHASE_MAP_TO_STORAGE) {
        const char *err = ap_check_cmd_context(cmd, NOT_IN_DIR_CONTEXT);
        if (err)
            return err;
    }
    if (dc->code[phase] == NULL)
        dc->count++;
    dc->code[phase] = (info & INLINE_CODE) ? code_inline(cmd, arg) : code_from_file(cmd, arg);
    has_scripts = 1;
    if (!phase_used[phase])
        hook_phase(phase);
    phase_used[phase] = 1;
    return NULL;
}

static const char *set_init(cmd_parms *cmd, void *dc, const char *arg)
{
    (void)dc;
    srv_conf *sc = ap_get_module_config(cmd->server->module_config, &carmine_module);
    sc->init = code_from_file(cmd, arg);
    has_scripts = 1;
    return NULL;
}

/* carmineTimeout, carmineMaxVMs, carmineGCEvery, carmineMemoryLimit: a number >= 0 in the
 * srv_conf field at offset cmd->info. */
static const char *set_srv_number(cmd_parms *cmd, void *dc, const char *arg)
{
    (void)dc;
    srv_conf *sc = ap_get_module_config(cmd->server->module_config, &carmine_module);
    char *end;
    apr_int64_t n = apr_strtoi64(arg, &end, 10);
    if (*arg == '\0' || *end != '\0' || n < 0)
        return apr_psprintf(cmd->pool, "%s: a number >= 0 (0: none)", cmd->cmd->name);
    *(apr_int64_t *)((char *)sc + (size_t)cmd->info) = n;
    return NULL;
}

#define PHASE_DIRECTIVES(name, phase, scope, what)                                              \
    AP_INIT_TAKE1("carmine" name, set_phase, (void *)(intptr_t)(phase), scope,                  \
                  "a Ruby script file run in the " what " phase"),                              \
    AP_INIT_TAKE1("carmine" name "Code", set_phase, (void *)(intptr_t)((phase) | INLINE_CODE),  \
                  scope, "inline Ruby code run in the " what " phase")

static const command_rec carmine_cmds[] = {
    PHASE_DIRECTIVES("PostReadRequest", PHASE_POST_READ_REQUEST, RSRC_CONF, "post-read-request"),
    PHASE_DIRECTIVES("TranslateName", PHASE_TRANSLATE_NAME, RSRC_CONF, "translate-name"),
    PHASE_DIRECTIVES("MapToStorage", PHASE_MAP_TO_STORAGE, RSRC_CONF, "map-to-storage"),
    PHASE_DIRECTIVES("AccessChecker", PHASE_ACCESS_CHECKER, RSRC_CONF | ACCESS_CONF, "access-checker"),
    PHASE_DIRECTIVES("CheckUserId", PHASE_CHECK_USER_ID, RSRC_CONF | ACCESS_CONF, "authentication (check-user-id)"),
    PHASE_DIRECTIVES("AuthChecker", PHASE_AUTH_CHECKER, RSRC_CONF | ACCESS_CONF, "authorization (auth-checker)"),
    PHASE_DIRECTIVES("Fixups", PHASE_FIXUPS, RSRC_CONF | ACCESS_CONF, "fixups"),
    PHASE_DIRECTIVES("Handler", PHASE_HANDLER, RSRC_CONF | ACCESS_CONF, "content handler"),
    PHASE_DIRECTIVES("LogTransaction", PHASE_LOG_TRANSACTION, RSRC_CONF | ACCESS_CONF, "log-transaction"),
    AP_INIT_TAKE1("carmineInit", set_init, NULL, RSRC_CONF,
                  "a Ruby file run once in each new VM; what it defines persists across requests"),
    AP_INIT_TAKE1("carmineTimeout", set_srv_number, (void *)offsetof(srv_conf, timeout_ms), RSRC_CONF,
                  "milliseconds a script may run before Carmine::TimeoutError (0: no limit)"),
    AP_INIT_TAKE1("carmineMaxVMs", set_srv_number, (void *)offsetof(srv_conf, max_vms), RSRC_CONF,
                  "VMs per server process at most (default: the CPUs; 0: one for each script running at once)"),
    AP_INIT_TAKE1("carmineGCMallocLimit", set_srv_number, (void *)offsetof(srv_conf, gc_malloc_limit), RSRC_CONF,
                  "bytes of new buffers after which a VM collects (default 1 MiB; 0: libcarmine's 16 MiB)"),
    AP_INIT_TAKE1("carmineGCEvery", set_srv_number, (void *)offsetof(srv_conf, gc_every), RSRC_CONF,
                  "a full collection in a VM after every N runs, between requests (0: none)"),
    AP_INIT_TAKE1("carmineMemoryLimit", set_srv_number, (void *)offsetof(srv_conf, mem_limit), RSRC_CONF,
                  "bytes a VM's heap may grow to before NoMemoryError (0: no limit)"),
    AP_INIT_TAKE1("carmineMallocArenas", set_srv_number, (void *)offsetof(srv_conf, malloc_arenas), RSRC_CONF,
                  "malloc arenas per server process at most (glibc M_ARENA_MAX; default 2; 0: glibc's default)"),
    {NULL}
};

/* ---- the script files' watch: a thread of the parent process -------------------------- */

/* In a shared anonymous mapping made by the parent before it forks, so every child reads
 * the count its watcher writes. NULL: no watch (script files are stat'ed at each use). */
static carmine_watch *shared_watch;
static pid_t watch_owner;    /* the process running the watcher */
static pthread_t watcher;
static int watcher_stop = -1; /* an eventfd: written to end the watcher */

/* Drains the watch whenever the kernel queues events, until told to stop. If its
 * descriptor fails, the watch is given up (fd -1): the VMs then stat at each use. */
static void *watcher_main(void *arg)
{
    carmine_watch *w = arg;
    struct pollfd fds[2] = {{w->fd, POLLIN, 0}, {watcher_stop, POLLIN, 0}};
    for (;;) {
        if (poll(fds, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (fds[1].revents != 0)
            return NULL;
        if (fds[0].revents & POLLIN)
            carmine_watch_drain(w);
        else if (fds[0].revents != 0)
            break;
    }
    int fd = w->fd;
    __atomic_store_n(&w->fd, -1, __ATOMIC_RELEASE);
    close(fd);
    return NULL;
}

/* Stops the watcher. The page stays mapped in the children of this configuration, which
 * may still be finishing requests: with its fd -1 they stat at each use. */
static apr_status_t watch_stop(void *data)
{
    (void)data;
    if (shared_watch == NULL || getpid() != watch_owner)
        return APR_SUCCESS;
    uint64_t one = 1;
    if (write(watcher_stop, &one, sizeof one) == (ssize_t)sizeof one)
        pthread_join(watcher, NULL);
    close(watcher_stop);
    watcher_stop = -1;
    carmine_watch_close(shared_watch);
    munmap(shared_watch, sizeof *shared_watch);
    shared_watch = NULL;
    return APR_SUCCESS;
}

/* Watches the configuration's script files from a new thread of this (the parent)
 * process, stopped when pconf is cleared (a restart reads the configuration again).
 * On any failure there is no watch, and the VMs stat the files at each use. */
static void watch_start(apr_pool_t *pconf, server_rec *s)
{
    int files = 0;
    for (int i = 0; script_codes != NULL && i < script_codes->nelts; i++)
        files += APR_ARRAY_IDX(script_codes, i, carmine_code *)->is_file;
    if (files == 0 || shared_watch != NULL)
        return;
    carmine_watch *w = mmap(NULL, sizeof *w, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (w == MAP_FAILED)
        return;
    int ok = carmine_watch_open(w) >= 0;
    for (int i = 0; ok && i < script_codes->nelts; i++) {
        const carmine_code *c = APR_ARRAY_IDX(script_codes, i, carmine_code *);
        ok = !c->is_file || carmine_watch_add(w, c->path) == 0;
    }
    if (ok)
        ok = (watcher_stop = eventfd(0, EFD_CLOEXEC)) >= 0;
    if (ok) {
        /* Signals stay with the parent's main thread: the watcher blocks them all. */
        sigset_t all, old;
        sigfillset(&all);
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setstacksize(&attr, 64 * 1024);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        ok = pthread_create(&watcher, &attr, watcher_main, w) == 0;
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        pthread_attr_destroy(&attr);
    }
    if (!ok) {
        ap_log_error(APLOG_MARK, APLOG_WARNING, errno, s,
                     "mod_carmine: cannot watch the script files (inotify); they are stat'ed at each use");
        if (watcher_stop >= 0)
            close(watcher_stop);
        watcher_stop = -1;
        carmine_watch_close(w);
        munmap(w, sizeof *w);
        return;
    }
    pthread_setname_np(watcher, "carmine-watch");
    shared_watch = w;
    watch_owner = getpid();
    apr_pool_cleanup_register(pconf, NULL, watch_stop, apr_pool_cleanup_null);
}

/* ---- per-thread VM ------------------------------------------------------------------ */

typedef struct run_ctx {
    request_rec *r;
    int rc;        /* what the phase returns: Apache.return sets it */
} run_ctx;

typedef struct body_cache {
    const char *data;
    apr_size_t len;
} body_cache;

/* A slot of the pool: a VM, and what its C methods need to find the request. Slots are
 * never freed while the process lives (the list is append-only, so it is walked without
 * the lock); a slot whose VM was discarded gets a new VM from the next phase that
 * claims it. */
typedef struct vm_slot {
    carmine_host *host; /* NULL: no VM yet (or discarded) */
    run_ctx *cur;       /* the phase running now, NULL between runs */
    server_rec *server;
    int busy;           /* atomic: 1 while a phase holds the slot */
    struct vm_slot *next;
} vm_slot;

/* A phase claims a free slot with one atomic exchange, without the lock; the lock (and
 * the condition) serve only a phase that finds none free: it adds a slot while the pool
 * is below its bound, else waits. A release signals only when a phase waits. */
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pool_returned = PTHREAD_COND_INITIALIZER;
static vm_slot *pool_head;  /* atomic; slots are added at the head under pool_lock */
static int pool_slots;      /* under pool_lock */
static int pool_waiters;    /* atomic: phases in vm_acquire's slow path */
static int pool_max; /* carmineMaxVMs as it applies (0: no bound), set in child_init */
static server_rec *main_server;

static void define_api(carmine_vm *vm);

static void log_error_line(void *arg, const char *text)
{
    request_rec *r = arg;
    ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, "mod_carmine: %s", text);
}

static void log_server_error_line(void *arg, const char *text)
{
    ap_log_error(APLOG_MARK, APLOG_ERR, 0, (server_rec *)arg, "mod_carmine: %s", text);
}

/* `$stdout` of a VM: the response body while a request runs, else the error log. */
static void write_stdout(void *data, const char *bytes, size_t len)
{
    vm_slot *ts = data;
    if (ts->cur != NULL && ts->cur->r != NULL) {
        ap_rwrite(bytes, (int)len, ts->cur->r);
        return;
    }
    ap_log_error(APLOG_MARK, APLOG_NOTICE, 0, ts->server, "mod_carmine: %.*s", (int)len, bytes);
}

/* `$stderr` (warn, $stderr.puts): the error log, a line per write. */
static void write_stderr(void *data, const char *bytes, size_t len)
{
    vm_slot *ts = data;
    while (len > 0 && bytes[len - 1] == '\n')
        len--;
    if (len == 0)
        return;
    if (ts->cur != NULL && ts->cur->r != NULL)
        ap_log_rerror(APLOG_MARK, APLOG_WARNING, 0, ts->cur->r, "mod_carmine: %.*s", (int)len, bytes);
    else
        ap_log_error(APLOG_MARK, APLOG_WARNING, 0, ts->server, "mod_carmine: %.*s", (int)len, bytes);
}

/* A free slot of the pool, now this thread's; NULL when all are busy. */
static vm_slot *pool_claim(void)
{
    for (vm_slot *ts = __atomic_load_n(&pool_head, __ATOMIC_ACQUIRE); ts != NULL; ts = ts->next)
        if (!__atomic_load_n(&ts->busy, __ATOMIC_RELAXED) && !__atomic_exchange_n(&ts->busy, 1, __ATOMIC_SEQ_CST))
            return ts;
    return NULL;
}

/* Gives ts a new VM with the module's API and the server's settings; 0 on success. */
static int vm_make(vm_slot *ts)
{
    srv_conf *sc = ap_get_module_config(main_server->module_config, &carmine_module);
    ts->server = main_server;
    ts->host = carmine_host_open();
    if (ts->host == NULL) {
        ap_log_error(APLOG_MARK, APLOG_CRIT, 0, ts->server, "mod_carmine: cannot create a VM");
        return -1;
    }
    ts->host->watch = shared_watch;
    ap_log_error(APLOG_MARK, APLOG_INFO, 0, ts->server, "mod_carmine: a VM of this process created (%d slots)", pool_slots);
    carmine_vm *vm = ts->host->vm;
    carmine_host_set_gc_every(ts->host, (unsigned)sc->gc_every);
    if (sc->gc_malloc_limit >= 0)
        carmine_host_set_gc_malloc_limit(ts->host, (size_t)sc->gc_malloc_limit);
    carmine_set_userdata(vm, ts);
    carmine_set_stdout(vm, write_stdout, ts);
    carmine_set_stderr(vm, write_stderr, ts);
    define_api(vm);
    if (sc->timeout_ms > 0)
        carmine_set_timeout(vm, (uint64_t)sc->timeout_ms);
    if (sc->mem_limit > 0)
        carmine_set_memory_limit(vm, (size_t)sc->mem_limit);
    if (sc->init != NULL) {
        carmine_script *s = carmine_host_script(ts->host, sc->init);
        if (s == NULL || carmine_run_shared(vm, s, NULL) != CARMINE_OK) {
            ap_log_error(APLOG_MARK, APLOG_ERR, 0, ts->server, "mod_carmine: carmineInit %s failed", sc->init->path);
            carmine_host_each_error_line(ts->host, log_server_error_line, ts->server);
        }
    }
    return 0;
}

static void vm_release(vm_slot *ts)
{
    __atomic_store_n(&ts->busy, 0, __ATOMIC_SEQ_CST);
    /* A waiter counted itself before looking for a free slot (under the lock, which it
     * holds until it waits): it either saw this slot free or is signalled now. */
    if (__atomic_load_n(&pool_waiters, __ATOMIC_SEQ_CST) > 0) {
        pthread_mutex_lock(&pool_lock);
        pthread_cond_signal(&pool_returned);
        pthread_mutex_unlock(&pool_lock);
    }
}

/* A VM of the pool for this thread's exclusive use until vm_release; NULL on failure. */
static vm_slot *vm_acquire(void)
{
    vm_slot *ts = pool_claim();
    if (ts == NULL) {
        pthread_mutex_lock(&pool_lock);
        __atomic_add_fetch(&pool_waiters, 1, __ATOMIC_SEQ_CST);
        while ((ts = pool_claim()) == NULL) {
            if (pool_max == 0 || pool_slots < pool_max) {
                ts = calloc(1, sizeof *ts);
                if (ts == NULL)
                    break;
                ts->busy = 1;
                ts->next = pool_head;
                __atomic_store_n(&pool_head, ts, __ATOMIC_RELEASE);
                pool_slots++;
                break;
            }
            pthread_cond_wait(&pool_returned, &pool_lock);
        }
        __atomic_sub_fetch(&pool_waiters, 1, __ATOMIC_SEQ_CST);
        pthread_mutex_unlock(&pool_lock);
        if (ts == NULL)
            return NULL;
    }
    if (ts->host == NULL && vm_make(ts) != 0) {
        vm_release(ts);
        return NULL;
    }
    return ts;
}

/* A VM that reported an internal error: closed; its slot gets a new VM at its next use. */
static void vm_discard(vm_slot *ts)
{
    carmine_host_close(ts->host);
    ts->host = NULL;
    vm_release(ts);
}

static const char *const phase_names[PHASE_COUNT] = {
    "post_read_request", "translate_name", "map_to_storage", "access_checker",
    "check_user_id", "auth_checker", "fixups", "handler", "log_transaction"
};

static int run_phase(request_rec *r, int phase, int default_rc)
{
    dir_conf *dc = ap_get_module_config(r->per_dir_config, &carmine_module);
    carmine_code *code = dc ? dc->code[phase] : NULL;
    if (code == NULL)
        return DECLINED;
    vm_slot *ts = vm_acquire();
    if (ts == NULL)
        return HTTP_INTERNAL_SERVER_ERROR;
    carmine_script *script = carmine_host_script(ts->host, code);
    if (script == NULL) {
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, "mod_carmine: %s: cannot load %s", phase_names[phase], code->path);
        carmine_host_each_error_line(ts->host, log_error_line, r);
        vm_release(ts);
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    run_ctx ctx = {r, default_rc};
    ts->cur = &ctx;
    carmine_status st = carmine_host_run(ts->host, script, NULL);
    ts->cur = NULL;
    int rc;
    switch (st) {
    case CARMINE_OK:
    case CARMINE_EXIT:
        rc = ctx.rc;
        break;
    case CARMINE_BUG:
        ap_log_rerror(APLOG_MARK, APLOG_CRIT, 0, r, "mod_carmine: %s: internal error in the VM; discarding it", phase_names[phase]);
        carmine_host_each_error_line(ts->host, log_error_line, r);
        vm_discard(ts);
        return HTTP_INTERNAL_SERVER_ERROR;
    default:
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, "mod_carmine: %s: %s raised", phase_names[phase], code->path);
        carmine_host_each_error_line(ts->host, log_error_line, r);
        rc = HTTP_INTERNAL_SERVER_ERROR;
        break;
    }
    vm_release(ts);
    return rc;
}

static int post_read_request(request_rec *r) { return run_phase(r, PHASE_POST_READ_REQUEST, DECLINED); }
static int translate_name(request_rec *r) { return run_phase(r, PHASE_TRANSLATE_NAME, DECLINED); }
static int map_to_storage(request_rec *r) { return run_phase(r, PHASE_MAP_TO_STORAGE, DECLINED); }
static int access_checker(request_rec *r) { return run_phase(r, PHASE_ACCESS_CHECKER, DECLINED); }
static int check_user_id(request_rec *r) { return run_phase(r, PHASE_CHECK_USER_ID, DECLINED); }
static int auth_checker(request_rec *r) { return run_phase(r, PHASE_AUTH_CHECKER, DECLINED); }
static int fixups(request_rec *r) { return run_phase(r, PHASE_FIXUPS, DECLINED); }
static int handler(request_rec *r) { return run_phase(r, PHASE_HANDLER, OK); }
static int log_transaction(request_rec *r) { return run_phase(r, PHASE_LOG_TRANSACTION, DECLINED); }

static void child_init(apr_pool_t *p, server_rec *s)
{
    (void)p;
    main_server = s;
    /* A child only reads the watch's count: the descriptors are the parent's. */
    if (shared_watch != NULL && getpid() != watch_owner) {
        close(shared_watch->fd);
        close(watcher_stop);
    }
#ifdef M_ARENA_MAX
    /* glibc gives each thread that allocates an arena of its own (up to 8 per core); VMs
     * move between the pool's threads, so their memory ends up spread over all of them.
     * Two arenas keep a process's memory flat (bench/web/run memory). */
    srv_conf *sc = ap_get_module_config(s->module_config, &carmine_module);
    if (sc->malloc_arenas != 0)
        mallopt(M_ARENA_MAX, sc->malloc_arenas > 0 ? (int)sc->malloc_arenas : DEFAULT_MALLOC_ARENAS);
#endif
    if (sc->max_vms >= 0) {
        pool_max = (int)sc->max_vms;
    } else {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        pool_max = cpus > 0 ? (int)cpus : 1;
    }
    /* The pool is filled up to its bound (one VM when unbounded) before the first request. */
    if (has_scripts) {
        int n = pool_max > 0 ? pool_max : 1;
        vm_slot *made[64];
        int k = 0;
        while (k < n && k < 64 && (made[k] = vm_acquire()) != NULL)
            k++;
        /* Each VM compiles the scripts now rather than at its first request. */
        for (int i = 0; i < k && script_codes != NULL; i++)
            carmine_host_compile_all(made[i]->host, (carmine_code *const *)script_codes->elts, (size_t)script_codes->nelts);
        while (k > 0)
            vm_release(made[--k]);
        /* Booting the VMs and compiling ran code a request never runs again: the process
         * keeps mapped only the code its requests use. */
        carmine_release_code_pages();
    }
}

static int post_config(apr_pool_t *p, apr_pool_t *plog, apr_pool_t *ptemp, server_rec *s)
{
    (void)plog, (void)ptemp;
    main_server = s;
    ap_add_version_component(p, "mod_carmine/" MOD_CARMINE_VERSION);
    /* The first reading of the configuration only checks it (and the server may still
     * detach into a new process after it): the watcher starts with the real one. */
    if (ap_state_query(AP_SQ_MAIN_STATE) != AP_SQ_MS_CREATE_PRE_CONFIG)
        watch_start(p, s);
    return OK;
}

/* Registers the hook of a phase that a directive gave a script. Apache sorts the hooks
 * again after processing the configuration (as it does for mod_perl's), so a hook added
 * by a directive runs like one added in register_hooks. */
static void hook_phase(int phase)
{
    switch (phase) {
    case PHASE_POST_READ_REQUEST: ap_hook_post_read_request(post_read_request, NULL, NULL, APR_HOOK_MIDDLE); break;
    case PHASE_TRANSLATE_NAME: ap_hook_translate_name(translate_name, NULL, NULL, APR_HOOK_MIDDLE); break;
    case PHASE_MAP_TO_STORAGE: ap_hook_map_to_storage(map_to_storage, NULL, NULL, APR_HOOK_MIDDLE); break;
    case PHASE_ACCESS_CHECKER:
        ap_hook_check_access(access_checker, NULL, NULL, APR_HOOK_MIDDLE, AP_AUTH_INTERNAL_PER_CONF);
        break;
    case PHASE_CHECK_USER_ID:
        ap_hook_check_authn(check_user_id, NULL, NULL, APR_HOOK_MIDDLE, AP_AUTH_INTERNAL_PER_CONF);
        break;
    case PHASE_AUTH_CHECKER:
        ap_hook_check_authz(auth_checker, NULL, NULL, APR_HOOK_FIRST, AP_AUTH_INTERNAL_PER_CONF);
        break;
    case PHASE_FIXUPS: ap_hook_fixups(fixups, NULL, NULL, APR_HOOK_MIDDLE); break;
    case PHASE_HANDLER: ap_hook_handler(handler, NULL, NULL, APR_HOOK_MIDDLE); break;
    case PHASE_LOG_TRANSACTION: ap_hook_log_transaction(log_transaction, NULL, NULL, APR_HOOK_MIDDLE); break;
    }
}

static void register_hooks(apr_pool_t *p)
{
    (void)p;
    /* A new configuration cycle: Apache dropped every hook, the phases' included. */
    has_scripts = 0;
    script_codes = NULL;
    memset(phase_used, 0, sizeof phase_used);
    ap_hook_post_config(post_config, NULL, NULL, APR_HOOK_MIDDLE);
    ap_hook_child_init(child_init, NULL, NULL, APR_HOOK_MIDDLE);
}

/* ---- the Ruby API: Apache, Apache::Request, Server, Connection ----------------------- */

/* The request of the phase running now; raises (returns NULL) outside one. */
static request_rec *current_request(carmine_vm *vm)
{
    vm_slot *ts = carmine_userdata(vm);
    if (ts != NULL && ts->cur != NULL && ts->cur->r != NULL)
        return ts->cur->r;
    carmine_raise(vm, carmine_class_get(vm, "RuntimeError"), "no request is being processed");
    return NULL;
}

#define WITH_REQUEST(vm, r)                 \
    request_rec *r = current_request(vm);   \
    if (r == NULL)                          \
        return CARMINE_UNDEF

static carmine_value str_or_nil(carmine_vm *vm, const char *s)
{
    return s ? carmine_cstr(vm, s) : carmine_nil();
}

/* A String argument as a copy in the request's pool; NULL (TypeError pending) otherwise. */
static char *pool_str(carmine_vm *vm, apr_pool_t *p, carmine_value v, apr_size_t *len_out)
{
    size_t len;
    const char *s = carmine_host_text(vm, v, &len);
    if (s == NULL)
        return NULL;
    if (len_out)
        *len_out = len;
    return apr_pstrmemdup(p, s, len);
}

/* Getters and setters of request_rec's string fields: data is the field's offset. */
static carmine_value req_str_get(carmine_vm *vm, carmine_value self, int argc, const carmine_value *argv,
                                 carmine_value blk, void *data)
{
    (void)self, (void)argc, (void)argv, (void)blk;
    WITH_REQUEST(vm, r);
    return str_or_nil(vm, *(const char **)((char *)r + (size_t)data));
}

static carmine_value req_str_set(carmine_vm *vm, carmine_value self, int argc, const carmine_value *argv,
                                 carmine_value blk, void *data)
{
    (void)self, (void)argc, (void)blk;
    WITH_REQUEST(vm, r);
    char *s = pool_str(vm, r->pool, argv[0], NULL);
    if (s == NULL)
        return CARMINE_UNDEF;
    if ((size_t)data == offsetof(request_rec, content_type))
        ap_set_content_type(r, s);
    else
        *(const char **)((char *)r + (size_t)data) = s;
    return argv[0];
}

static carmine_value req_status(carmine_vm *vm, carmine_value self, int argc, const carmine_value *argv,
                                carmine_value blk, void *data)
{
    (void)self, (void)argc, (void)argv, (void)blk, (void)data;
    WITH_REQUEST(vm, r);
    return carmine_int(vm, r->status);
}

static carmine_value req_set_status(carmine_vm *vm, carmine_value self, int argc, const carmine_value *argv,
                                    carmine_value blk, void *data)
{
    (void)self, (void)argc, (void)blk, (void)data;
    WITH_REQUEST(vm, r);
    int64_t st;
    if (carmine_to_int(vm, argv[0], &st) != CARMINE_OK)
        return CARMINE_UNDEF;
    r->status = (int)st;
    return argv[0];
}

/* The request body, read once (Apache's blocking read, on this worker thread). */
static carmine_value req_body(carmine_vm *vm, carmine_value self, int argc, const carmine_value *argv,
                              carmine_value blk, void *data)
{
    (void)self, (void)argc, (void)argv, (void)blk, (void)data;
    WITH_REQUEST(vm, r);
    body_cache *bc = ap_get_module_config(r->request_config, &carmine_module);
    if (bc == NULL) {
        bc = apr_pcalloc(r->pool, sizeof *bc);
        bc->data = "";
        if (ap_setup_client_block(r, REQUEST_CHUNKED_DECHUNK) == OK && ap_should_client_block(r)) {
            apr_size_t cap = 8192, len = 0;
            char *buf = apr_palloc(r->pool, cap);
            long n;
            for (;;) {
                if (cap - len < 4096) {
                    char *bigger = apr_palloc(r->pool, cap * 2);
                    memcpy(bigger, buf, len);
                    buf = bigger;
                    cap *= 2;
                }
                n = ap_get_client_block(r, buf + len, cap - len);
                if (n <= 0)
                    break;
                len += (apr_size_t)n;
            }
            if (n < 0)
                return carmine_raise(vm, carmine_class_get(vm, "IOError"), "reading the request body failed");
            bc->data = buf;
            bc->len = len;
        }
        ap_set_module_config(r->request_config, &carmine_module, bc);
    }
    return carmine_str(vm, bc->data, bc->len);
}

static carmine_value req_document_root(carmine_vm *vm, carmine_value self, int argc, const carmine_value *argv,
                                       carmine_value blk, void *data)
{
    (void)self, (void)argc, (void)argv, (void)blk, (void)data;
    WITH_REQUEST(vm, r);
    return str_or_nil(vm, ap_document_root(r));
}

/* Apache::Headers_in, Headers_out, Env, Notes: an apr_table_t of the request, at the
 * offset given as data. */
static apr_table_t *request_table(request_rec *r, void *data)
{
    return *(apr_table_t **)((char *)r + (size_t)data);
}

static carmine_value table_get(carmine_vm *vm, carmine_value self, int argc, const carmine_value *argv,
                               carmine_value blk, void *data)
{
    (void)self, (void)argc, (void)blk;
    WITH_REQUEST(vm, r);
    char *key = pool_str(vm, r->pool, argv[0], NULL);
    if (key == NULL)
        return CARMINE_UNDEF;
    return str_or_nil(vm, apr_table_get(request_table(r, data), key));
}

static carmine_value table_set(carmine_vm *vm, carmine_value self, int argc, const carmine_value *argv,
                               carmine_value blk, void *data)
{
    (void)self, (void)argc, (void)blk;
    WITH_REQUEST(vm, r);
    char *key = pool_str(vm, r->pool, argv[0], NULL);
    if (key == NULL)
        return CARMINE_UNDEF;
    if (carmine_is_nil(argv[1])) {
        apr_table_unset(request_table(r, data), key);
        return argv[1];
    }
    char *val = pool_str(vm, r->pool, argv[1], NULL);
    if (val == NULL)
        return CARMINE_UNDEF;
    apr_table_set(request_table(r, data), key, val);
    return argv[1];
}

static carmine_value table_delete(carmine_vm *vm, carmine_value self, int argc, const carmine_value *argv,
                                  carmine_value blk, void *data)
{
    (void)self, (void)argc, (void)blk;
    WITH_REQUEST(vm, r);
    char *key = pool_str(vm, r->pool, argv[0], NULL);
    if (key == NULL)
        return CARMINE_UNDEF;
    carmine_value old = str_or_nil(vm, apr_table_get(request_table(r, data), key));
    apr_table_unset(request_table(r, data), key);
    return old;
}

typedef struct table_walk {
    carmine_vm *vm;
    carmine_value hash;
} table_walk;

static int table_entry(void *arg, const char *key, const char *val)
{
    table_walk *w = arg;
    carmine_hash_set(w->vm, w->hash, carmine_cstr(w->vm, key), carmine_cstr(w->vm, val));
    return 1;
}

static carmine_value table_all(carmine_vm *vm, carmine_value self, int argc, const carmine_value *argv,
                               carmine_value blk, void *data)
{
    (void)self, (void)argc, (void)argv, (void)blk;
    WITH_REQUEST(vm, r);
    table_walk w = {vm, carmine_hash_new(vm)};
    apr_table_do(table_entry, &w, request_table(r, data), NULL);
    return w.hash;
}

/* Apache.rputs(str), Apache.echo(str): the response body. */
static carmine_value apache_rputs(carmine_vm *vm, carmine_value self, int argc, const carmine_value *argv,
                                  carmine_value blk, void *data)
{
    (void)self, (void)argc, (void)blk;
    WITH_REQUEST(vm, r);
    size_t len;
    const char *s = carmine_host_text(vm, argv[0], &len);
    if (s == NULL)
        return CARMINE_UNDEF;
    ap_rwrite(s, (int)len, r);
    if (data != NULL)
        ap_rputs("\n", r);
    return carmine_nil();
}

/* Apache.return(code): what the phase returns to Apache. */
static carmine_value apache_return(carmine_vm *vm, carmine_value self, int argc, const carmine_value *argv,
                                   carmine_value blk, void *data)
{
    (void)self, (void)argc, (void)blk, (void)data;
    vm_slot *ts = carmine_userdata(vm);
    WITH_REQUEST(vm, r);
    (void)r;
    int64_t rc;
    if (carmine_to_int(vm, argv[0], &rc) != CARMINE_OK)
        return CARMINE_UNDEF;
    ts->cur->rc = (int)rc;
    return argv[0];
}

/* Apache.errlogger(level, message) / Apache.log: the error log at an APLOG_* level. */
static carmine_value apache_errlogger(carmine_vm *vm, carmine_value self, int argc, const carmine_value *argv,
                                      carmine_value blk, void *data)
{
    (void)self, (void)argc, (void)blk, (void)data;
    vm_slot *ts = carmine_userdata(vm);
    int64_t level;
    if (carmine_to_int(vm, argv[0], &level) != CARMINE_OK)
        return CARMINE_UNDEF;
    size_t len;
    const char *msg = carmine_host_text(vm, argv[1], &len);
    if (msg == NULL)
        return CARMINE_UNDEF;
    if (level < APLOG_EMERG || level > APLOG_TRACE8)
        level = APLOG_ERR;
    if (ts != NULL && ts->cur != NULL)
        ap_log_rerror(APLOG_MARK, (int)level, 0, ts->cur->r, "%.*s", (int)len, msg);
    else
        ap_log_error(APLOG_MARK, (int)level, 0, main_server, "%.*s", (int)len, msg);
    return carmine_nil();
}

static carmine_value apache_server_version(carmine_vm *vm, carmine_value self, int argc, const carmine_value *argv,
                                           carmine_value blk, void *data)
{
    (void)self, (void)argc, (void)argv, (void)blk, (void)data;
    return carmine_cstr(vm, ap_get_server_banner());
}

/* Apache::Server: the request's virtual host. data selects the field. */
enum server_field { SRV_HOSTNAME, SRV_ADMIN, SRV_PORT, SRV_ERROR_FNAME, SRV_TIMEOUT, SRV_KEEP_ALIVE_TIMEOUT, SRV_LOGLEVEL };

static carmine_value server_field(carmine_vm *vm, carmine_value self, int argc, const carmine_value *argv,
                                  carmine_value blk, void *data)
{
    (void)self, (void)argc, (void)argv, (void)blk;
    WITH_REQUEST(vm, r);
    server_rec *s = r->server;
    switch ((enum server_field)(intptr_t)data) {
    case SRV_HOSTNAME: return str_or_nil(vm, s->server_hostname);
    case SRV_ADMIN: return str_or_nil(vm, s->server_admin);
    case SRV_PORT: return carmine_int(vm, s->port ? s->port : (r->connection->local_addr ? r->connection->local_addr->port : 0));
    case SRV_ERROR_FNAME: return str_or_nil(vm, s->error_fname);
    case SRV_TIMEOUT: return carmine_int(vm, (int64_t)apr_time_sec(s->timeout));
    case SRV_KEEP_ALIVE_TIMEOUT: return carmine_int(vm, (int64_t)apr_time_sec(s->keep_alive_timeout));
    case SRV_LOGLEVEL: return carmine_int(vm, s->log.level);
    }
    return carmine_nil();
}

/* Apache::Connection: the request's client connection. */
enum conn_field { CONN_REMOTE_IP, CONN_LOCAL_IP, CONN_REMOTE_PORT, CONN_LOCAL_PORT, CONN_KEEPALIVES, CONN_ID };

static carmine_value conn_field(carmine_vm *vm, carmine_value self, int argc, const carmine_value *argv,
                                carmine_value blk, void *data)
{
    (void)self, (void)argc, (void)argv, (void)blk;
    WITH_REQUEST(vm, r);
    conn_rec *c = r->connection;
    switch ((enum conn_field)(intptr_t)data) {
    case CONN_REMOTE_IP: return str_or_nil(vm, c->client_ip);
    case CONN_LOCAL_IP: return str_or_nil(vm, c->local_ip);
    case CONN_REMOTE_PORT: return carmine_int(vm, c->client_addr ? c->client_addr->port : 0);
    case CONN_LOCAL_PORT: return carmine_int(vm, c->local_addr ? c->local_addr->port : 0);
    case CONN_KEEPALIVES: return carmine_int(vm, c->keepalives);
    case CONN_ID: return carmine_int(vm, c->id);
    }
    return carmine_nil();
}

typedef struct named_int {
    const char *name;
    int value;
} named_int;

static const named_int apache_constants[] = {
    {"OK", OK}, {"DECLINED", DECLINED}, {"DONE", DONE},
    {"HTTP_CONTINUE", HTTP_CONTINUE}, {"HTTP_OK", HTTP_OK}, {"HTTP_CREATED", HTTP_CREATED},
    {"HTTP_ACCEPTED", HTTP_ACCEPTED}, {"HTTP_NO_CONTENT", HTTP_NO_CONTENT},
    {"HTTP_MOVED_PERMANENTLY", HTTP_MOVED_PERMANENTLY}, {"HTTP_MOVED_TEMPORARILY", HTTP_MOVED_TEMPORARILY},
    {"HTTP_SEE_OTHER", HTTP_SEE_OTHER}, {"HTTP_NOT_MODIFIED", HTTP_NOT_MODIFIED},
    {"HTTP_TEMPORARY_REDIRECT", HTTP_TEMPORARY_REDIRECT}, {"HTTP_BAD_REQUEST", HTTP_BAD_REQUEST},
    {"HTTP_UNAUTHORIZED", HTTP_UNAUTHORIZED}, {"HTTP_FORBIDDEN", HTTP_FORBIDDEN},
    {"HTTP_NOT_FOUND", HTTP_NOT_FOUND}, {"HTTP_METHOD_NOT_ALLOWED", HTTP_METHOD_NOT_ALLOWED},
    {"HTTP_REQUEST_TIME_OUT", HTTP_REQUEST_TIME_OUT}, {"HTTP_CONFLICT", HTTP_CONFLICT},
    {"HTTP_GONE", HTTP_GONE}, {"HTTP_REQUEST_ENTITY_TOO_LARGE", HTTP_REQUEST_ENTITY_TOO_LARGE},
    {"HTTP_TOO_MANY_REQUESTS", HTTP_TOO_MANY_REQUESTS},
    {"HTTP_INTERNAL_SERVER_ERROR", HTTP_INTERNAL_SERVER_ERROR}, {"HTTP_NOT_IMPLEMENTED", HTTP_NOT_IMPLEMENTED},
    {"HTTP_BAD_GATEWAY", HTTP_BAD_GATEWAY}, {"HTTP_SERVICE_UNAVAILABLE", HTTP_SERVICE_UNAVAILABLE},
    {"HTTP_GATEWAY_TIME_OUT", HTTP_GATEWAY_TIME_OUT},
    {"APLOG_EMERG", APLOG_EMERG}, {"APLOG_ALERT", APLOG_ALERT}, {"APLOG_CRIT", APLOG_CRIT},
    {"APLOG_ERR", APLOG_ERR}, {"APLOG_WARNING", APLOG_WARNING}, {"APLOG_NOTICE", APLOG_NOTICE},
    {"APLOG_INFO", APLOG_INFO}, {"APLOG_DEBUG", APLOG_DEBUG},
    {NULL, 0}
};

#define FIELD(f) ((void *)offsetof(request_rec, f))

static const carmine_method_def request_methods[] = {
    {"the_request", req_str_get, 0, 0, FIELD(the_request)},
    {"protocol", req_str_get, 0, 0, FIELD(protocol)},
    {"method", req_str_get, 0, 0, FIELD(method)},
    {"hostname", req_str_get, 0, 0, FIELD(hostname)},
    {"uri", req_str_get, 0, 0, FIELD(uri)},
    {"uri=", req_str_set, 1, 1, FIELD(uri)},
    {"unparsed_uri", req_str_get, 0, 0, FIELD(unparsed_uri)},
    {"args", req_str_get, 0, 0, FIELD(args)},
    {"args=", req_str_set, 1, 1, FIELD(args)},
    {"filename", req_str_get, 0, 0, FIELD(filename)},
    {"filename=", req_str_set, 1, 1, FIELD(filename)},
    {"canonical_filename", req_str_get, 0, 0, FIELD(canonical_filename)},
    {"path_info", req_str_get, 0, 0, FIELD(path_info)},
    {"path_info=", req_str_set, 1, 1, FIELD(path_info)},
    {"content_type", req_str_get, 0, 0, FIELD(content_type)},
    {"content_type=", req_str_set, 1, 1, FIELD(content_type)},
    {"content_encoding", req_str_get, 0, 0, FIELD(content_encoding)},
    {"handler", req_str_get, 0, 0, FIELD(handler)},
    {"handler=", req_str_set, 1, 1, FIELD(handler)},
    {"user", req_str_get, 0, 0, FIELD(user)},
    {"user=", req_str_set, 1, 1, FIELD(user)},
    {"ap_auth_type", req_str_get, 0, 0, FIELD(ap_auth_type)},
    {"status_line", req_str_get, 0, 0, FIELD(status_line)},
    {"status_line=", req_str_set, 1, 1, FIELD(status_line)},
    {"status", req_status, 0, 0, NULL},
    {"status=", req_set_status, 1, 1, NULL},
    {"body", req_body, 0, 0, NULL},
    {"document_root", req_document_root, 0, 0, NULL},
    {NULL, NULL, 0, 0, NULL}
};

static const carmine_method_def table_methods[] = {
    {"[]", table_get, 1, 1, NULL},
    {"[]=", table_set, 2, 2, NULL},
    {"delete", table_delete, 1, 1, NULL},
    {"all", table_all, 0, 0, NULL},
    {"to_h", table_all, 0, 0, NULL},
    {NULL, NULL, 0, 0, NULL}
};

static void define_table_class(carmine_vm *vm, carmine_value apache, const char *name, size_t offset)
{
    carmine_value klass = carmine_define_class_under(vm, apache, name, CARMINE_UNDEF);
    carmine_host_define_methods(vm, klass, table_methods, 1, (void *)offset);
}

static void define_api(carmine_vm *vm)
{
    carmine_value apache = carmine_define_module(vm, "Apache");
    for (const named_int *c = apache_constants; c->name; c++)
        carmine_const_set(vm, apache, c->name, carmine_int(vm, c->value));

    carmine_define_module_function(vm, apache, "rputs", apache_rputs, 1, 1, NULL);
    carmine_define_module_function(vm, apache, "echo", apache_rputs, 1, 1, (void *)1);
    carmine_define_module_function(vm, apache, "return", apache_return, 1, 1, NULL);
    carmine_define_module_function(vm, apache, "errlogger", apache_errlogger, 2, 2, NULL);
    carmine_define_module_function(vm, apache, "log", apache_errlogger, 2, 2, NULL);
    carmine_define_module_function(vm, apache, "module_name", carmine_host_data_string, 0, 0, (void *)"mod_carmine");
    carmine_define_module_function(vm, apache, "module_version", carmine_host_data_string, 0, 0, (void *)MOD_CARMINE_VERSION);
    carmine_define_module_function(vm, apache, "server_version", apache_server_version, 0, 0, NULL);

    carmine_value request = carmine_define_class_under(vm, apache, "Request", CARMINE_UNDEF);
    carmine_host_define_methods(vm, request, request_methods, 0, NULL);

    define_table_class(vm, apache, "Headers_in", offsetof(request_rec, headers_in));
    define_table_class(vm, apache, "Headers_out", offsetof(request_rec, headers_out));
    define_table_class(vm, apache, "Env", offsetof(request_rec, subprocess_env));
    define_table_class(vm, apache, "Notes", offsetof(request_rec, notes));
    static const char request_rb[] =
        "class Apache::Request\n"
        "  def headers_in; Apache::Headers_in.new; end\n"
        "  def headers_out; Apache::Headers_out.new; end\n"
        "  def subprocess_env; Apache::Env.new; end\n"
        "  def notes; Apache::Notes.new; end\n"
        "  def server; Apache::Server.new; end\n"
        "  def connection; Apache::Connection.new; end\n"
        "end\n";
    carmine_eval_shared(vm, request_rb, sizeof request_rb - 1, "mod_carmine", NULL);

    carmine_value server = carmine_define_class_under(vm, apache, "Server", CARMINE_UNDEF);
    static const struct { const char *name; enum server_field f; } server_fields[] = {
        {"hostname", SRV_HOSTNAME}, {"server_hostname", SRV_HOSTNAME}, {"server_admin", SRV_ADMIN},
        {"port", SRV_PORT}, {"error_fname", SRV_ERROR_FNAME}, {"timeout", SRV_TIMEOUT},
        {"keep_alive_timeout", SRV_KEEP_ALIVE_TIMEOUT}, {"loglevel", SRV_LOGLEVEL}
    };
    for (size_t i = 0; i < sizeof server_fields / sizeof server_fields[0]; i++)
        carmine_define_method(vm, server, server_fields[i].name, server_field, 0, 0, (void *)(intptr_t)server_fields[i].f);
    carmine_define_method(vm, server, "document_root", req_document_root, 0, 0, NULL);

    carmine_value conn = carmine_define_class_under(vm, apache, "Connection", CARMINE_UNDEF);
    static const struct { const char *name; enum conn_field f; } conn_fields[] = {
        {"remote_ip", CONN_REMOTE_IP}, {"client_ip", CONN_REMOTE_IP}, {"local_ip", CONN_LOCAL_IP},
        {"remote_port", CONN_REMOTE_PORT}, {"local_port", CONN_LOCAL_PORT},
        {"keepalives", CONN_KEEPALIVES}, {"id", CONN_ID}
    };
    for (size_t i = 0; i < sizeof conn_fields / sizeof conn_fields[0]; i++)
        carmine_define_method(vm, conn, conn_fields[i].name, conn_field, 0, 0, (void *)(intptr_t)conn_fields[i].f);
}

module AP_MODULE_DECLARE_DATA carmine_module = {
    STANDARD20_MODULE_STUFF,
    create_dir_conf,
    merge_dir_conf,
    create_srv_conf,
    NULL,
    carmine_cmds,
    register_hooks
};
