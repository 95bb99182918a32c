/*
 * ngx_http_carmine_module: Ruby (Carmine, through libcarmine's carmine.h) in nginx's
 * request phases, in the conventions of ngx_mruby.
 *
 *   load_module modules/ngx_http_carmine_module.so;
 *   location / { carmine_content_handler_code 'Nginx.rputs "hello"'; }
 *
 * Invariants:
 * - One VM per worker process, made in init_process (after the fork; the master never has
 *   one) and used only by the worker's event-loop thread. `carmine_init` runs there,
 *   shared: what it defines persists for the worker's life.
 * - A script is compiled once per worker and reused; a script file is recompiled when it
 *   changes (servers/common/carmine_host.h). The worker's `watch` (inotify) is a
 *   connection of the event loop, drained when the kernel reports a change, so a request
 *   uses a file script without a stat unless something changed (or a second passed).
 *   Each run is isolated.
 * - The request being served is reached through `cur` (set only while a script runs or
 *   resumes): Ruby objects hold no ngx_http_request_t pointers.
 * - A content handler never blocks the worker on the client: the request body, if the
 *   request has one, is read by nginx's non-blocking reader before the script runs
 *   (ngx_http_read_client_request_body), and the response is buffered in the request
 *   pool and sent after the script ends.
 * - Nor on a script: rewrite, access and content scripts run as suspendable runs
 *   (carmine_start). A run that waits (sleep, a socket) is suspended, its wait armed as an
 *   nginx timer and/or events of a connection around its descriptor, and the handler
 *   returns to the event loop; the event resumes it (carmine_resume). A run that waits on
 *   a Mutex, Queue or ConditionVariable is suspended too, with at most a timer armed: the
 *   VM's waker (carmine_set_waker) posts the request's `wake` event when another run
 *   unlocks, pushes or signals, and nginx resumes it once the current handler returns. All of a worker's
 *   runs share its VM and stay isolated (libcarmine sets a suspended run's changes aside).
 *   Ruby threads run while the worker is in its event loop (carmine_set_notify), so
 *   Thread#join and Thread#value suspend too: a thread's end is reported through the
 *   worker's eventfd (`notify_conn`), whose handler has libcarmine call the waker.
 *   A request whose pool goes away with its run suspended cancels the run. Log scripts and
 *   carmine_set variables run to the end (carmine_run). See docs/web-servers.md.
 * - A VM that reports an internal error is replaced for new requests and closed once no
 *   run is suspended in it.
 * - A script that raises, does not compile, or hits a limit ends the request with 500 and
 *   its report (class, message, backtrace) goes to the error log, one line per entry.
 */
#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include <sys/eventfd.h>

#include "carmine.h"
#include "carmine_host.h"

#define NGX_HTTP_CARMINE_VERSION "0.1.0"

typedef struct {
    carmine_code *init;
    ngx_msec_t timeout;
    size_t memory_limit;
    ngx_uint_t gc_every;
    size_t gc_malloc_limit;
    ngx_array_t *codes;   /* every script of the configuration (carmine_code *): each worker
                           * compiles them when it starts and watches the files among them */
    /* Phases some directive gave a script: only their handlers are registered, so the
     * other phases cost a request nothing. */
    unsigned rewrite_used:1;
    unsigned access_used:1;
    unsigned log_used:1;
} ngx_http_carmine_main_conf_t;

typedef struct {
    carmine_code *content;
    carmine_code *rewrite;
    carmine_code *access;
    carmine_code *log;
} ngx_http_carmine_loc_conf_t;

/* The script running now. */
typedef struct {
    ngx_http_request_t *r;
    ngx_int_t rc;          /* Nginx.return sets it */
    ngx_chain_t *out;      /* response body written by rputs/echo/puts */
    ngx_chain_t **last;
    off_t len;
    ngx_int_t redirect;    /* Nginx.redirect without a status: internal redirect to uri */
    ngx_str_t redirect_uri;
} ngx_http_carmine_run_t;

static carmine_host *host;
static carmine_watch watch = { .fd = -1 };
static ngx_connection_t *watch_conn;
/* The worker's eventfd, in its event loop: Ruby threads write it when they wake a
 * suspended run (carmine_set_notify). */
static ngx_connection_t *notify_conn;
static ngx_http_carmine_run_t *cur;
static ngx_cycle_t *worker_cycle;

static ngx_int_t ngx_http_carmine_init(ngx_conf_t *cf);
static ngx_int_t ngx_http_carmine_init_process(ngx_cycle_t *cycle);
static void ngx_http_carmine_exit_process(ngx_cycle_t *cycle);
static void *ngx_http_carmine_create_main_conf(ngx_conf_t *cf);
static void *ngx_http_carmine_create_loc_conf(ngx_conf_t *cf);
static char *ngx_http_carmine_merge_loc_conf(ngx_conf_t *cf, void *parent, void *child);
static char *ngx_http_carmine_set_phase(ngx_conf_t *cf, ngx_command_t *cmd, void *conf);
static char *ngx_http_carmine_set_init(ngx_conf_t *cf, ngx_command_t *cmd, void *conf);
static char *ngx_http_carmine_set_var(ngx_conf_t *cf, ngx_command_t *cmd, void *conf);
static void ngx_http_carmine_define_api(carmine_vm *vm);

/* cmd->post packs the phase (offset in the loc conf) and whether the argument is code. */
#define CARMINE_INLINE 1

#define PHASE_COMMANDS(name, field)                                                            \
    {ngx_string("carmine_" name "_handler"), NGX_HTTP_MAIN_CONF | NGX_HTTP_SRV_CONF | NGX_HTTP_LOC_CONF | NGX_CONF_TAKE1, \
     ngx_http_carmine_set_phase, NGX_HTTP_LOC_CONF_OFFSET, offsetof(ngx_http_carmine_loc_conf_t, field), NULL}, \
    {ngx_string("carmine_" name "_handler_code"), NGX_HTTP_MAIN_CONF | NGX_HTTP_SRV_CONF | NGX_HTTP_LOC_CONF | NGX_CONF_TAKE1, \
     ngx_http_carmine_set_phase, NGX_HTTP_LOC_CONF_OFFSET, offsetof(ngx_http_carmine_loc_conf_t, field), (void *)CARMINE_INLINE}

static ngx_command_t ngx_http_carmine_commands[] = {
    PHASE_COMMANDS("content", content),
    PHASE_COMMANDS("rewrite", rewrite),
    PHASE_COMMANDS("access", access),
    PHASE_COMMANDS("log", log),
    {ngx_string("carmine_set"), NGX_HTTP_MAIN_CONF | NGX_HTTP_SRV_CONF | NGX_HTTP_LOC_CONF | NGX_CONF_TAKE2,
     ngx_http_carmine_set_var, 0, 0, NULL},
    {ngx_string("carmine_set_code"), NGX_HTTP_MAIN_CONF | NGX_HTTP_SRV_CONF | NGX_HTTP_LOC_CONF | NGX_CONF_TAKE2,
     ngx_http_carmine_set_var, 0, 0, (void *)CARMINE_INLINE},
    {ngx_string("carmine_init"), NGX_HTTP_MAIN_CONF | NGX_CONF_TAKE1,
     ngx_http_carmine_set_init, NGX_HTTP_MAIN_CONF_OFFSET, 0, NULL},
    {ngx_string("carmine_timeout"), NGX_HTTP_MAIN_CONF | NGX_CONF_TAKE1,
     ngx_conf_set_msec_slot, NGX_HTTP_MAIN_CONF_OFFSET, offsetof(ngx_http_carmine_main_conf_t, timeout), NULL},
    {ngx_string("carmine_gc_every"), NGX_HTTP_MAIN_CONF | NGX_CONF_TAKE1,
     ngx_conf_set_num_slot, NGX_HTTP_MAIN_CONF_OFFSET, offsetof(ngx_http_carmine_main_conf_t, gc_every), NULL},
    {ngx_string("carmine_gc_malloc_limit"), NGX_HTTP_MAIN_CONF | NGX_CONF_TAKE1,
     ngx_conf_set_size_slot, NGX_HTTP_MAIN_CONF_OFFSET, offsetof(ngx_http_carmine_main_conf_t, gc_malloc_limit), NULL},
    {ngx_string("carmine_memory_limit"), NGX_HTTP_MAIN_CONF | NGX_CONF_TAKE1,
     ngx_conf_set_size_slot, NGX_HTTP_MAIN_CONF_OFFSET, offsetof(ngx_http_carmine_main_conf_t, memory_limit), NULL},
    ngx_null_command
};

static ngx_http_module_t ngx_http_carmine_module_ctx = {
    NULL,                               /* preconfiguration */
    ngx_http_carmine_init,              /* postconfiguration */
    ngx_http_carmine_create_main_conf,  /* create main configuration */
    NULL,                               /* init main configuration */
    NULL,                               /* create server configuration */
    NULL,                               /* merge server configuration */
    ngx_http_carmine_create_loc_conf,   /* create location configuration */
    ngx_http_carmine_merge_loc_conf     /* merge location configuration */
};

ngx_module_t ngx_http_carmine_module = {
    NGX_MODULE_V1,
    &ngx_http_carmine_module_ctx,
    ngx_http_carmine_commands,
    NGX_HTTP_MODULE,
    NULL,                               /* init master */
    NULL,                               /* init module */
    ngx_http_carmine_init_process,      /* init process */
    NULL,                               /* init thread */
    NULL,                               /* exit thread */
    ngx_http_carmine_exit_process,      /* exit process */
    NULL,                               /* exit master */
    NGX_MODULE_V1_PADDING
};

/* ---- configuration ------------------------------------------------------------------ */

static void *ngx_http_carmine_create_main_conf(ngx_conf_t *cf)
{
    ngx_http_carmine_main_conf_t *mcf = ngx_pcalloc(cf->pool, sizeof *mcf);
    if (mcf == NULL)
        return NULL;
    mcf->timeout = NGX_CONF_UNSET_MSEC;
    mcf->memory_limit = NGX_CONF_UNSET_SIZE;
    mcf->gc_every = NGX_CONF_UNSET_UINT;
    mcf->gc_malloc_limit = NGX_CONF_UNSET_SIZE;
    return mcf;
}

static void *ngx_http_carmine_create_loc_conf(ngx_conf_t *cf)
{
    return ngx_pcalloc(cf->pool, sizeof(ngx_http_carmine_loc_conf_t));
}

static char *ngx_http_carmine_merge_loc_conf(ngx_conf_t *cf, void *parent, void *child)
{
    ngx_http_carmine_loc_conf_t *prev = parent, *conf = child;
    (void)cf;
    if (conf->rewrite == NULL)
        conf->rewrite = prev->rewrite;
    if (conf->access == NULL)
        conf->access = prev->access;
    if (conf->log == NULL)
        conf->log = prev->log;
    /* The content handler is installed per location (clcf->handler), not inherited. */
    return NGX_CONF_OK;
}

static carmine_code *ngx_http_carmine_code(ngx_conf_t *cf, ngx_str_t *arg, ngx_uint_t is_inline)
{
    carmine_code *c = ngx_pcalloc(cf->pool, sizeof *c);
    if (c == NULL)
        return NULL;
    c->index = carmine_code_next_index();
    if (is_inline) {
        char *name = ngx_pnalloc(cf->pool, cf->conf_file->file.name.len + 32);
        u_char *src = ngx_pnalloc(cf->pool, arg->len + 1);
        if (name == NULL || src == NULL)
            return NULL;
        ngx_sprintf((u_char *)name, "%V:%ui%Z", &cf->conf_file->file.name, cf->conf_file->line);
        ngx_memcpy(src, arg->data, arg->len);
        src[arg->len] = '\0';
        c->path = name;
        c->src = (const char *)src;
        c->len = arg->len;
    } else {
        ngx_str_t path = *arg;
        if (ngx_conf_full_name(cf->cycle, &path, 1) != NGX_OK)
            return NULL;
        u_char *p = ngx_pnalloc(cf->pool, path.len + 1);
        if (p == NULL)
            return NULL;
        ngx_memcpy(p, path.data, path.len);
        p[path.len] = '\0';
        c->is_file = 1;
        c->path = (const char *)p;
    }
    ngx_http_carmine_main_conf_t *mcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_carmine_module);
    if (mcf->codes == NULL && (mcf->codes = ngx_array_create(cf->pool, 4, sizeof(carmine_code *))) == NULL)
        return NULL;
    carmine_code **slot = ngx_array_push(mcf->codes);
    if (slot == NULL)
        return NULL;
    *slot = c;
    return c;
}

static ngx_int_t ngx_http_carmine_content_handler(ngx_http_request_t *r);

static char *ngx_http_carmine_set_phase(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    carmine_code **slot = (carmine_code **)((char *)conf + cmd->offset);
    ngx_str_t *value = cf->args->elts;
    if (*slot != NULL)
        return "is duplicate";
    *slot = ngx_http_carmine_code(cf, &value[1], cmd->post != NULL);
    if (*slot == NULL)
        return NGX_CONF_ERROR;
    ngx_http_carmine_main_conf_t *mcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_carmine_module);
    switch (cmd->offset) {
    case offsetof(ngx_http_carmine_loc_conf_t, content): {
        ngx_http_core_loc_conf_t *clcf = ngx_http_conf_get_module_loc_conf(cf, ngx_http_core_module);
        clcf->handler = ngx_http_carmine_content_handler;
        break;
    }
    case offsetof(ngx_http_carmine_loc_conf_t, rewrite):
        mcf->rewrite_used = 1;
        break;
    case offsetof(ngx_http_carmine_loc_conf_t, access):
        mcf->access_used = 1;
        break;
    case offsetof(ngx_http_carmine_loc_conf_t, log):
        mcf->log_used = 1;
        break;
    }
    return NGX_CONF_OK;
}

static char *ngx_http_carmine_set_init(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_carmine_main_conf_t *mcf = conf;
    ngx_str_t *value = cf->args->elts;
    (void)cmd;
    if (mcf->init != NULL)
        return "is duplicate";
    mcf->init = ngx_http_carmine_code(cf, &value[1], 0);
    return mcf->init ? NGX_CONF_OK : NGX_CONF_ERROR;
}

/* ---- running scripts ---------------------------------------------------------------- */

typedef struct {
    ngx_log_t *log;
    ngx_uint_t level;
} ngx_http_carmine_log_target_t;

static void ngx_http_carmine_log_line(void *arg, const char *text)
{
    ngx_http_carmine_log_target_t *t = arg;
    ngx_log_error(t->level, t->log, 0, "carmine: %s", text);
}

static void ngx_http_carmine_log_report(ngx_log_t *log, const char *what, const char *path)
{
    ngx_http_carmine_log_target_t t = {log, NGX_LOG_ERR};
    ngx_log_error(NGX_LOG_ERR, log, 0, "carmine: %s %s", what, path);
    if (host != NULL)
        carmine_host_each_error_line(host, ngx_http_carmine_log_line, &t);
}

/* `$stdout`: the response body while a script runs, else the error log. */
static ngx_int_t ngx_http_carmine_append(ngx_http_carmine_run_t *run, const char *bytes, size_t len);

static void ngx_http_carmine_write_stdout(void *data, const char *bytes, size_t len)
{
    (void)data;
    if (cur != NULL && cur->r != NULL) {
        ngx_http_carmine_append(cur, bytes, len);
        return;
    }
    if (worker_cycle != NULL)
        ngx_log_error(NGX_LOG_NOTICE, worker_cycle->log, 0, "carmine: %*s", len, bytes);
}

static void ngx_http_carmine_write_stderr(void *data, const char *bytes, size_t len)
{
    (void)data;
    while (len > 0 && bytes[len - 1] == '\n')
        len--;
    if (len == 0)
        return;
    ngx_log_t *log = cur != NULL && cur->r != NULL ? cur->r->connection->log : worker_cycle ? worker_cycle->log : NULL;
    if (log != NULL)
        ngx_log_error(NGX_LOG_WARN, log, 0, "carmine: %*s", len, bytes);
}

static void ngx_http_carmine_waker(void *data, carmine_task *task);

/* Called on a Ruby thread of the VM (carmine_set_notify) that woke a suspended run
 * (a thread that ended, for a Thread#join) while the worker is in its event loop: the
 * eventfd wakes the loop, which has libcarmine call the waker on the worker's thread. */
static void ngx_http_carmine_notify(void *data)
{
    uint64_t one = 1;
    (void)data;
    if (write(notify_conn->fd, &one, sizeof one) < 0) {
        /* EAGAIN: the counter is already non-zero, a wake-up is pending. */
    }
}

static void ngx_http_carmine_notify_handler(ngx_event_t *ev)
{
    uint64_t n;
    while (read(notify_conn->fd, &n, sizeof n) == (ssize_t)sizeof n) {
    }
    (void)ev;
    if (host != NULL)
        carmine_deliver_wakes(host->vm);
}

/* The eventfd of ngx_http_carmine_notify (not ngx_notify: its one handler per process is
 * nginx's thread pools'). Without one, Ruby threads run only while the worker is in the
 * VM, and a run waits in place while threads are alive. */
static void ngx_http_carmine_open_notify(ngx_cycle_t *cycle)
{
    int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (fd < 0)
        return;
    notify_conn = ngx_get_connection(fd, cycle->log);
    if (notify_conn == NULL) {
        close(fd);
        return;
    }
    notify_conn->read->handler = ngx_http_carmine_notify_handler;
    notify_conn->read->log = cycle->log;
    if (ngx_handle_read_event(notify_conn->read, 0) != NGX_OK) {
        ngx_close_connection(notify_conn); /* closes fd */
        notify_conn = NULL;
    }
}

/* The worker's VM with the Nginx API defined and the limits and init script applied. */
static ngx_int_t ngx_http_carmine_open_host(ngx_cycle_t *cycle, ngx_log_t *log)
{
    ngx_http_carmine_main_conf_t *mcf = ngx_http_cycle_get_module_main_conf(cycle, ngx_http_carmine_module);
    host = carmine_host_open();
    if (host == NULL) {
        ngx_log_error(NGX_LOG_EMERG, log, 0, "carmine: cannot create a VM");
        return NGX_ERROR;
    }
    carmine_set_stdout(host->vm, ngx_http_carmine_write_stdout, NULL);
    carmine_set_stderr(host->vm, ngx_http_carmine_write_stderr, NULL);
    carmine_set_waker(host->vm, ngx_http_carmine_waker, NULL);
    if (notify_conn != NULL)
        carmine_set_notify(host->vm, ngx_http_carmine_notify, NULL);
    host->watch = &watch;
    ngx_http_carmine_define_api(host->vm);
    if (mcf == NULL)
        return NGX_OK;
    if (mcf->gc_every != NGX_CONF_UNSET_UINT)
        carmine_host_set_gc_every(host, (unsigned)mcf->gc_every);
    if (mcf->gc_malloc_limit != NGX_CONF_UNSET_SIZE)
        carmine_host_set_gc_malloc_limit(host, mcf->gc_malloc_limit);
    if (mcf->timeout != NGX_CONF_UNSET_MSEC && mcf->timeout > 0)
        carmine_set_timeout(host->vm, mcf->timeout);
    if (mcf->memory_limit != NGX_CONF_UNSET_SIZE && mcf->memory_limit > 0)
        carmine_set_memory_limit(host->vm, mcf->memory_limit);
    if (mcf->init != NULL) {
        carmine_script *s = carmine_host_script(host, mcf->init);
        if (s == NULL || carmine_run_shared(host->vm, s, NULL) != CARMINE_OK)
            ngx_http_carmine_log_report(log, "carmine_init failed:", mcf->init->path);
    }
    return NGX_OK;
}

static void ngx_http_carmine_watch_handler(ngx_event_t *ev)
{
    (void)ev;
    carmine_watch_drain(&watch);
}

/* The worker's inotify descriptor in its event loop, watching every script file of the
 * configuration. Without one, script files are stat'ed at each use. */
static void ngx_http_carmine_open_watch(ngx_cycle_t *cycle)
{
    ngx_http_carmine_main_conf_t *mcf = ngx_http_cycle_get_module_main_conf(cycle, ngx_http_carmine_module);
    if (carmine_watch_open(&watch) < 0)
        return;
    carmine_code **codes = mcf->codes != NULL ? mcf->codes->elts : NULL;
    for (ngx_uint_t i = 0; codes != NULL && i < mcf->codes->nelts; i++) {
        if (codes[i]->is_file && carmine_watch_add(&watch, codes[i]->path) != 0) {
            carmine_watch_close(&watch);
            return;
        }
    }
    watch_conn = ngx_get_connection(watch.fd, cycle->log);
    if (watch_conn == NULL) {
        carmine_watch_close(&watch);
        return;
    }
    watch_conn->read->handler = ngx_http_carmine_watch_handler;
    watch_conn->read->log = cycle->log;
    if (ngx_handle_read_event(watch_conn->read, 0) != NGX_OK) {
        ngx_close_connection(watch_conn); /* closes watch.fd */
        watch_conn = NULL;
        watch.fd = -1;
        carmine_watch_close(&watch);
    }
}

static ngx_int_t ngx_http_carmine_init_process(ngx_cycle_t *cycle)
{
    worker_cycle = cycle;
    if (ngx_http_cycle_get_module_main_conf(cycle, ngx_http_carmine_module) == NULL)
        return NGX_OK;
    ngx_http_carmine_open_watch(cycle);
    ngx_http_carmine_open_notify(cycle);
    ngx_int_t rc = ngx_http_carmine_open_host(cycle, cycle->log);
    /* Compiling is done here too, not at the first request. */
    ngx_http_carmine_main_conf_t *mcf = ngx_http_cycle_get_module_main_conf(cycle, ngx_http_carmine_module);
    if (host != NULL && mcf->codes != NULL)
        carmine_host_compile_all(host, mcf->codes->elts, mcf->codes->nelts);
    /* Booting the VM and compiling ran code a request never runs again: the worker keeps
     * mapped only the code its requests use. */
    carmine_release_code_pages();
    return rc;
}

static void ngx_http_carmine_exit_process(ngx_cycle_t *cycle)
{
    (void)cycle;
    carmine_host_close(host);
    host = NULL;
    if (notify_conn != NULL) {
        ngx_close_connection(notify_conn); /* closes the eventfd */
        notify_conn = NULL;
    }
    if (watch_conn != NULL) {
        ngx_close_connection(watch_conn); /* closes watch.fd */
        watch_conn = NULL;
        watch.fd = -1;
    }
    carmine_watch_close(&watch);
}

static void ngx_http_carmine_retire(carmine_host *h);

/* Runs code for r to the end (carmine_run: a wait in it blocks the worker); *value (may
 * be NULL) gets the script's value. NGX_OK, or NGX_ERROR after logging why. */
static ngx_int_t ngx_http_carmine_run(ngx_http_request_t *r, carmine_code *code, ngx_http_carmine_run_t *run,
                                      carmine_value *value)
{
    if (host == NULL && ngx_http_carmine_open_host(worker_cycle, r->connection->log) != NGX_OK)
        return NGX_ERROR;
    carmine_script *s = carmine_host_script(host, code);
    if (s == NULL) {
        ngx_http_carmine_log_report(r->connection->log, "cannot load", code->path);
        return NGX_ERROR;
    }
    run->r = r;
    run->last = &run->out;
    ngx_http_carmine_run_t *outer = cur;
    cur = run;
    carmine_status st = carmine_host_run(host, s, value);
    cur = outer;
    switch (st) {
    case CARMINE_OK:
    case CARMINE_EXIT:
        return NGX_OK;
    case CARMINE_BUG:
        ngx_http_carmine_log_report(r->connection->log, "internal error in the VM (replacing it) running", code->path);
        ngx_http_carmine_retire(host);
        return NGX_ERROR;
    default:
        ngx_http_carmine_log_report(r->connection->log, "raised in", code->path);
        return NGX_ERROR;
    }
}

/* A piece of the response body: its chain link, its buffer and a copy of its bytes, in
 * one block of the request pool. */
typedef struct {
    ngx_chain_t cl;
    ngx_buf_t b;
} ngx_http_carmine_piece_t;

static ngx_int_t ngx_http_carmine_append(ngx_http_carmine_run_t *run, const char *bytes, size_t len)
{
    ngx_http_request_t *r = run->r;
    if (len == 0)
        return NGX_OK;
    ngx_http_carmine_piece_t *p = ngx_palloc(r->pool, sizeof *p + len);
    if (p == NULL)
        return NGX_ERROR;
    ngx_buf_t *b = &p->b;
    ngx_memzero(b, sizeof *b);
    b->start = b->pos = (u_char *)(p + 1);
    b->last = b->end = ngx_cpymem(b->start, bytes, len);
    b->temporary = 1;
    ngx_chain_t *cl = &p->cl;
    cl->buf = b;
    cl->next = NULL;
    *run->last = cl;
    run->last = &cl->next;
    run->len += (off_t)len;
    return NGX_OK;
}

/* After a non-content phase: continue (NGX_DECLINED) unless Nginx.return / redirect. */
static ngx_int_t ngx_http_carmine_phase_result(ngx_http_request_t *r, ngx_http_carmine_run_t *run, ngx_int_t rc)
{
    if (rc != NGX_OK)
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    if (run->redirect) {
        (void)ngx_http_internal_redirect(r, &run->redirect_uri, &r->args);
        ngx_http_finalize_request(r, NGX_DONE);
        return NGX_DONE;
    }
    return run->rc;
}

/* ---- suspendable runs: rewrite, access and content scripts ------------------------ */

/* The script of a rewrite, access or content phase in progress for a request (its module
 * ctx). While the run is suspended, `task` is set (its data is this ctx) and what it
 * waits for is armed: `timer`, `conn` (a descriptor, with or without a timer), or for a
 * Mutex/Queue wait nothing but perhaps `timer` — the waker posts `wake`. Their handlers
 * resume it. */
typedef struct {
    ngx_http_carmine_run_t run;
    carmine_code *code;
    carmine_host *host;      /* the VM the task lives in */
    carmine_task *task;      /* suspended run, or NULL */
    ngx_event_t timer;
    ngx_event_t wake;        /* posted by the waker */
    ngx_connection_t *conn;  /* watches the descriptor the run waits for */
    ngx_uint_t phase;        /* NGX_HTTP_REWRITE_PHASE, _ACCESS_PHASE, _CONTENT_PHASE; 0: none */
    int ready;               /* what woke the run: CARMINE_READABLE/WRITABLE, 0 for time */
    unsigned woken:1;        /* rewrite/access: resume at the handler's next entry */
    unsigned cleanup:1;      /* the pool cleanup that cancels a suspended run is registered */
} ngx_http_carmine_ctx_t;

static void ngx_http_carmine_wake(ngx_http_request_t *r, int ready);

static void ngx_http_carmine_timer_handler(ngx_event_t *ev)
{
    ngx_http_carmine_wake(ev->data, 0);
}

/* Called by the VM, inside another run (or from carmine_deliver_wakes), when a task
 * suspended on a Mutex, Queue, ConditionVariable or Thread#join may go on: its request is
 * resumed from the posted-events queue, after the handler running now returns (the VM is
 * busy until then). Always on the worker's thread (see ngx_http_carmine_notify). */
static void ngx_http_carmine_waker(void *data, carmine_task *task)
{
    ngx_http_carmine_ctx_t *ctx = carmine_task_data(task);
    (void)data;
    if (ctx != NULL && !ctx->wake.posted) {
        ngx_post_event(&ctx->wake, &ngx_posted_events); /* a macro with an if: braces needed */
    }
}

static void ngx_http_carmine_fd_handler(ngx_event_t *ev)
{
    ngx_connection_t *c = ev->data;
    ngx_http_carmine_wake(c->data, ev->write ? CARMINE_WRITABLE : CARMINE_READABLE);
}

/* Stops watching what the run waited for. The descriptor belongs to the script: its
 * events are taken out of the event loop, and the connection is freed without closing it. */
static void ngx_http_carmine_disarm(ngx_http_carmine_ctx_t *ctx)
{
    if (ctx->timer.timer_set)
        ngx_del_timer(&ctx->timer);
    if (ctx->timer.posted) {
        ngx_delete_posted_event(&ctx->timer); /* a multi-statement macro: braces needed */
    }
    if (ctx->wake.posted) {
        ngx_delete_posted_event(&ctx->wake);
    }
    ngx_connection_t *c = ctx->conn;
    if (c == NULL)
        return;
    ctx->conn = NULL;
    if (c->read->active)
        ngx_del_event(c->read, NGX_READ_EVENT, 0);
    if (c->write->active)
        ngx_del_event(c->write, NGX_WRITE_EVENT, 0);
    if (c->read->posted) {
        ngx_delete_posted_event(c->read);
    }
    if (c->write->posted) {
        ngx_delete_posted_event(c->write);
    }
    ngx_free_connection(c);
}

static void ngx_http_carmine_cleanup(void *data);

/* Watches what a suspended run waits for: a timer, a descriptor, or both. */
static ngx_int_t ngx_http_carmine_arm(ngx_http_request_t *r, ngx_http_carmine_ctx_t *ctx, const carmine_wait *w)
{
    if (!ctx->cleanup) {
        ngx_pool_cleanup_t *cln = ngx_pool_cleanup_add(r->pool, 0);
        if (cln == NULL)
            return NGX_ERROR;
        cln->handler = ngx_http_carmine_cleanup;
        cln->data = ctx;
        ctx->cleanup = 1;
    }
    if (w->events != 0) {
        ngx_connection_t *c = ngx_get_connection(w->fd, r->connection->log);
        if (c == NULL)
            return NGX_ERROR;
        c->data = r;
        c->read->handler = ngx_http_carmine_fd_handler;
        c->write->handler = ngx_http_carmine_fd_handler;
        c->read->log = r->connection->log;
        c->write->log = r->connection->log;
        ctx->conn = c;
        if ((w->events & CARMINE_READABLE) && ngx_handle_read_event(c->read, 0) != NGX_OK)
            return NGX_ERROR;
        if ((w->events & CARMINE_WRITABLE) && ngx_handle_write_event(c->write, 0) != NGX_OK)
            return NGX_ERROR;
    }
    ctx->wake.handler = ngx_http_carmine_timer_handler;
    ctx->wake.data = r;
    ctx->wake.log = r->connection->log;
    carmine_task_set_data(ctx->task, ctx);
    if (w->timeout_ms >= 0) {
        ctx->timer.handler = ngx_http_carmine_timer_handler;
        ctx->timer.data = r;
        ctx->timer.log = r->connection->log;
        /* Timers count from nginx's cached clock, which is as old as this event loop
         * iteration, and in whole milliseconds: refreshed and given one more millisecond,
         * the timer never fires before the time the VM asked for (a run resumed early
         * would take its sleep as ended before its deadline had passed). */
        ngx_time_update();
        ngx_add_timer(&ctx->timer, (ngx_msec_t)w->timeout_ms + 1);
    }
    return NGX_OK;
}

/* A VM that reported an internal error is replaced for new requests, and closed once no
 * run is suspended in it any more. */
static void ngx_http_carmine_retire(carmine_host *h)
{
    if (h == host)
        host = NULL;
    if (h->tasks == 0)
        carmine_host_close(h);
}

/* The end of a run of `ctx`'s script: NGX_OK, or NGX_ERROR (logged). */
static ngx_int_t ngx_http_carmine_ended(ngx_http_request_t *r, ngx_http_carmine_ctx_t *ctx, carmine_status st)
{
    carmine_host *h = ctx->host;
    switch (st) {
    case CARMINE_OK:
    case CARMINE_EXIT:
        carmine_host_ran(h);
        return NGX_OK;
    case CARMINE_BUG:
        ngx_log_error(NGX_LOG_ERR, r->connection->log, 0, "carmine: internal error in the VM (replacing it) running %s",
                      ctx->code->path);
        ngx_http_carmine_retire(h);
        return NGX_ERROR;
    default:
        ngx_http_carmine_log_report(r->connection->log, "raised in", ctx->code->path);
        carmine_host_ran(h);
        return NGX_ERROR;
    }
}

/* Starts ctx's script, or continues it after a wake-up: NGX_AGAIN while it is suspended
 * (what it waits for is armed), NGX_OK when it ended, NGX_ERROR (logged) when it failed. */
static ngx_int_t ngx_http_carmine_step(ngx_http_request_t *r, ngx_http_carmine_ctx_t *ctx)
{
    carmine_wait w;
    carmine_status st;
    int resumed = ctx->task != NULL;
    ngx_http_carmine_run_t *outer = cur;
    if (!resumed) {
        if (host == NULL && ngx_http_carmine_open_host(worker_cycle, r->connection->log) != NGX_OK)
            return NGX_ERROR;
        ctx->host = host;
        carmine_script *s = carmine_host_script(host, ctx->code);
        if (s == NULL) {
            ngx_http_carmine_log_report(r->connection->log, "cannot load", ctx->code->path);
            return NGX_ERROR;
        }
        ctx->run.r = r;
        ctx->run.last = &ctx->run.out;
        cur = &ctx->run;
        st = carmine_start(host->vm, s, &ctx->task, &w, NULL);
    } else {
        cur = &ctx->run;
        st = carmine_resume(ctx->host->vm, ctx->task, ctx->ready, &w, NULL);
    }
    cur = outer;
    if (st == CARMINE_SUSPENDED) {
        if (!resumed)
            ctx->host->tasks++;
        if (ngx_http_carmine_arm(r, ctx, &w) == NGX_OK)
            return NGX_AGAIN;
        ngx_log_error(NGX_LOG_ERR, r->connection->log, 0, "carmine: cannot wait for what %s waits for", ctx->code->path);
        ngx_http_carmine_disarm(ctx);
        cur = NULL;
        st = carmine_cancel(ctx->host->vm, ctx->task);
        cur = outer;
        (void)st;
        ctx->task = NULL;
        ctx->host->tasks--;
        return NGX_ERROR;
    }
    if (resumed) {
        ctx->task = NULL;
        ctx->host->tasks--;
    }
    return ngx_http_carmine_ended(r, ctx, st);
}

/* The request's pool is going away with a run still suspended (the request was ended
 * early): the run is cancelled, with no request to answer to. */
static void ngx_http_carmine_cleanup(void *data)
{
    ngx_http_carmine_ctx_t *ctx = data;
    if (ctx->task == NULL)
        return;
    ngx_http_carmine_disarm(ctx);
    ngx_http_carmine_run_t none = {0}, *outer = cur;
    cur = &none;
    carmine_status st = carmine_cancel(ctx->host->vm, ctx->task);
    cur = outer;
    ctx->task = NULL;
    ctx->host->tasks--;
    if (st == CARMINE_BUG || (ctx->host != host && ctx->host->tasks == 0))
        ngx_http_carmine_retire(ctx->host);
}

/* The request's ctx, reset for a new run of `code` in `phase`. */
static ngx_http_carmine_ctx_t *ngx_http_carmine_new_ctx(ngx_http_request_t *r, carmine_code *code, ngx_uint_t phase)
{
    ngx_http_carmine_ctx_t *ctx = ngx_http_get_module_ctx(r, ngx_http_carmine_module);
    if (ctx == NULL) {
        ctx = ngx_pcalloc(r->pool, sizeof *ctx);
        if (ctx == NULL)
            return NULL;
        ngx_http_set_ctx(r, ctx, ngx_http_carmine_module);
    } else {
        unsigned cleanup = ctx->cleanup;
        ngx_memzero(ctx, sizeof *ctx);
        ctx->cleanup = cleanup;
    }
    ctx->code = code;
    ctx->phase = phase;
    return ctx;
}

/* The rewrite or access script of r's location, if any. A script that waits suspends the
 * phase (NGX_DONE: nginx stops running phases); when it is woken, the phase engine is run
 * again and re-enters here, which continues the script. */
static ngx_int_t ngx_http_carmine_phase(ngx_http_request_t *r, carmine_code *code, ngx_uint_t phase)
{
    if (code == NULL)
        return NGX_DECLINED;
    ngx_http_carmine_ctx_t *ctx = ngx_http_get_module_ctx(r, ngx_http_carmine_module);
    ngx_int_t rc;
    if (ctx != NULL && ctx->phase == phase && ctx->task != NULL) {
        if (!ctx->woken)
            return NGX_DONE; /* entered again while the script waits (a stray write event) */
        ctx->woken = 0;
        rc = ngx_http_carmine_step(r, ctx);
    } else {
        ctx = ngx_http_carmine_new_ctx(r, code, phase);
        if (ctx == NULL)
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        ctx->run.rc = NGX_DECLINED;
        rc = ngx_http_carmine_step(r, ctx);
    }
    if (rc == NGX_AGAIN)
        return NGX_DONE;
    ctx->phase = 0;
    return ngx_http_carmine_phase_result(r, &ctx->run, rc);
}

static ngx_int_t ngx_http_carmine_rewrite_handler(ngx_http_request_t *r)
{
    return ngx_http_carmine_phase(r, ((ngx_http_carmine_loc_conf_t *)ngx_http_get_module_loc_conf(r, ngx_http_carmine_module))->rewrite,
                                  NGX_HTTP_REWRITE_PHASE);
}

static ngx_int_t ngx_http_carmine_access_handler(ngx_http_request_t *r)
{
    return ngx_http_carmine_phase(r, ((ngx_http_carmine_loc_conf_t *)ngx_http_get_module_loc_conf(r, ngx_http_carmine_module))->access,
                                  NGX_HTTP_ACCESS_PHASE);
}

/* Log scripts and carmine_set variables run to the end (nginx cannot wait there): a
 * `sleep` in them blocks the worker. */
static ngx_int_t ngx_http_carmine_log_handler(ngx_http_request_t *r)
{
    ngx_http_carmine_loc_conf_t *lcf = ngx_http_get_module_loc_conf(r, ngx_http_carmine_module);
    if (lcf->log == NULL)
        return NGX_DECLINED;
    ngx_http_carmine_run_t run = {0};
    run.rc = NGX_OK;
    (void)ngx_http_carmine_run(r, lcf->log, &run, NULL);
    return NGX_OK;
}

/* Sends what the content script wrote, with its status: what to finalize the request
 * with. */
static ngx_int_t ngx_http_carmine_content_send(ngx_http_request_t *r, ngx_http_carmine_ctx_t *ctx, ngx_int_t rc)
{
    ngx_http_carmine_run_t *run = &ctx->run;
    ctx->phase = 0;
    if (rc != NGX_OK)
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    if (run->redirect) {
        ngx_http_internal_redirect(r, &run->redirect_uri, &r->args);
        return NGX_DONE;
    }
    if (run->rc != NGX_OK && run->rc >= NGX_HTTP_SPECIAL_RESPONSE && run->out == NULL)
        return run->rc;
    if (run->rc != NGX_OK && run->rc > 0)
        r->headers_out.status = run->rc;
    if (r->headers_out.status == 0)
        r->headers_out.status = NGX_HTTP_OK;
    r->headers_out.content_length_n = run->len;
    rc = ngx_http_send_header(r);
    if (rc == NGX_ERROR || rc > NGX_OK || r->header_only)
        return rc;
    if (run->out == NULL)
        return ngx_http_send_special(r, NGX_HTTP_LAST);
    ngx_chain_t *last = run->out;
    while (last->next)
        last = last->next;
    last->buf->last_buf = (r == r->main) ? 1 : 0;
    last->buf->last_in_chain = 1;
    return ngx_http_output_filter(r, run->out);
}

/* Sends the response of a content script that ended after its handler returned, and
 * finalizes the request. */
static void ngx_http_carmine_content_done(ngx_http_request_t *r, ngx_http_carmine_ctx_t *ctx, ngx_int_t rc)
{
    ngx_http_finalize_request(r, ngx_http_carmine_content_send(r, ctx, rc));
}

/* Starts the content script of r's location: NGX_AGAIN while it is suspended, else what
 * to finalize the request with. */
static ngx_int_t ngx_http_carmine_content_start(ngx_http_request_t *r)
{
    ngx_http_carmine_loc_conf_t *lcf = ngx_http_get_module_loc_conf(r, ngx_http_carmine_module);
    ngx_http_carmine_ctx_t *ctx = ngx_http_carmine_new_ctx(r, lcf->content, NGX_HTTP_CONTENT_PHASE);
    if (ctx == NULL)
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    ctx->run.rc = NGX_OK;
    ngx_int_t rc = ngx_http_carmine_step(r, ctx);
    return rc == NGX_AGAIN ? NGX_AGAIN : ngx_http_carmine_content_send(r, ctx, rc);
}

/* Runs the content script once nginx has read the body into memory. This handler owes
 * the request one ngx_http_finalize_request: now, or when the suspended script ends. */
static void ngx_http_carmine_content_body_read(ngx_http_request_t *r)
{
    ngx_int_t rc = ngx_http_carmine_content_start(r);
    if (rc != NGX_AGAIN)
        ngx_http_finalize_request(r, rc);
}

static ngx_int_t ngx_http_carmine_content_handler(ngx_http_request_t *r)
{
    /* A request without a body (no length, not chunked, and not HTTP/2, whose body may
     * come without a length) runs its script at once: a script that ends answers through
     * this handler's result, which nginx finalizes the request with; one that suspends
     * holds the request (counted as ngx_http_read_client_request_body counts it) until
     * it ends. Nginx::Request#body is "" either way. */
    if (r->headers_in.content_length_n <= 0 && !r->headers_in.chunked
#if (NGX_HTTP_V2)
        && r->stream == NULL
#endif
    ) {
        ngx_int_t rc = ngx_http_carmine_content_start(r);
        if (rc != NGX_AGAIN)
            return rc;
        r->main->count++;
        return NGX_DONE;
    }
    r->request_body_in_single_buf = 1;
    r->request_body_in_persistent_file = 0;
    ngx_int_t rc = ngx_http_read_client_request_body(r, ngx_http_carmine_content_body_read);
    if (rc >= NGX_HTTP_SPECIAL_RESPONSE)
        return rc;
    return NGX_DONE;
}

/* What a suspended run waited for happened (or its timeout passed): continue it. */
static void ngx_http_carmine_wake(ngx_http_request_t *r, int ready)
{
    ngx_connection_t *c = r->connection;
    ngx_http_carmine_ctx_t *ctx = ngx_http_get_module_ctx(r, ngx_http_carmine_module);
    if (ctx == NULL || ctx->task == NULL)
        return;
    ngx_http_carmine_disarm(ctx);
    ctx->ready = ready;
    if (ctx->phase == NGX_HTTP_CONTENT_PHASE) {
        ngx_int_t rc = ngx_http_carmine_step(r, ctx);
        if (rc != NGX_AGAIN)
            ngx_http_carmine_content_done(r, ctx, rc);
    } else {
        ctx->woken = 1;
        ngx_http_core_run_phases(r);
    }
    ngx_http_run_posted_requests(c);
}

/* carmine_set $name script: $name is the script's value (to_s), evaluated when used. */
static ngx_int_t ngx_http_carmine_variable(ngx_http_request_t *r, ngx_http_variable_value_t *v, uintptr_t data)
{
    carmine_code *code = (carmine_code *)data;
    ngx_http_carmine_run_t run = {0};
    carmine_value value;
    if (ngx_http_carmine_run(r, code, &run, &value) != NGX_OK)
        return NGX_ERROR;
    size_t len = 0;
    const char *s = NULL;
    if (!carmine_is_nil(value)) {
        carmine_value str = carmine_to_s(host->vm, value);
        s = str != CARMINE_UNDEF ? carmine_str_ptr(host->vm, str, &len) : NULL;
    }
    if (s == NULL) {
        v->not_found = 1;
        return NGX_OK;
    }
    u_char *p = ngx_pnalloc(r->pool, len);
    if (p == NULL)
        return NGX_ERROR;
    ngx_memcpy(p, s, len);
    v->data = p;
    v->len = len;
    v->valid = 1;
    v->no_cacheable = 0;
    v->not_found = 0;
    return NGX_OK;
}

static char *ngx_http_carmine_set_var(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_str_t *value = cf->args->elts;
    ngx_str_t name = value[1];
    (void)conf;
    if (name.len < 2 || name.data[0] != '$')
        return "needs a variable name such as $result";
    name.data++;
    name.len--;
    ngx_http_variable_t *var = ngx_http_add_variable(cf, &name, NGX_HTTP_VAR_CHANGEABLE);
    if (var == NULL)
        return NGX_CONF_ERROR;
    carmine_code *code = ngx_http_carmine_code(cf, &value[2], cmd->post != NULL);
    if (code == NULL)
        return NGX_CONF_ERROR;
    var->get_handler = ngx_http_carmine_variable;
    var->data = (uintptr_t)code;
    return NGX_CONF_OK;
}

/* Registers the handler of each phase some directive gave a script. */
static ngx_int_t ngx_http_carmine_init(ngx_conf_t *cf)
{
    ngx_http_core_main_conf_t *cmcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_core_module);
    ngx_http_carmine_main_conf_t *mcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_carmine_module);
    struct {
        unsigned used;
        ngx_uint_t phase;
        ngx_http_handler_pt handler;
    } phases[] = {
        {mcf->rewrite_used, NGX_HTTP_REWRITE_PHASE, ngx_http_carmine_rewrite_handler},
        {mcf->access_used, NGX_HTTP_ACCESS_PHASE, ngx_http_carmine_access_handler},
        {mcf->log_used, NGX_HTTP_LOG_PHASE, ngx_http_carmine_log_handler},
    };
    for (size_t i = 0; i < sizeof phases / sizeof phases[0]; i++) {
        if (!phases[i].used)
            continue;
        ngx_http_handler_pt *h = ngx_array_push(&cmcf->phases[phases[i].phase].handlers);
        if (h == NULL)
            return NGX_ERROR;
        *h = phases[i].handler;
    }
    return NGX_OK;
}

/* ---- the Ruby API: Nginx, Nginx::Request, Headers_in/out, Var ------------------------ */

static ngx_inline ngx_http_request_t *ngx_http_carmine_current(carmine_vm *vm)
{
    if (cur != NULL && cur->r != NULL)
        return cur->r;
    carmine_raise(vm, carmine_class_get(vm, "RuntimeError"), "no request is being processed");
    return NULL;
}

#define WITH_REQUEST(vm, r)                            \
    ngx_http_request_t *r = ngx_http_carmine_current(vm); \
    if (r == NULL)                                     \
        return CARMINE_UNDEF

#define UNUSED_ARGS (void)self, (void)argc, (void)argv, (void)blk, (void)data

static carmine_value ngx_str_value(carmine_vm *vm, ngx_str_t *s)
{
    return s->data ? carmine_str(vm, (const char *)s->data, s->len) : carmine_nil();
}

/* A String argument copied into the request pool; NGX_ERROR with a TypeError pending. */
static ngx_int_t ngx_http_carmine_arg_str(carmine_vm *vm, ngx_pool_t *pool, carmine_value v, ngx_str_t *out)
{
    size_t len;
    const char *s = carmine_host_text(vm, v, &len);
    if (s == NULL)
        return NGX_ERROR;
    out->data = ngx_pnalloc(pool, len + 1);
    if (out->data == NULL) {
        carmine_raise(vm, carmine_class_get(vm, "NoMemoryError"), "request pool exhausted");
        return NGX_ERROR;
    }
    ngx_memcpy(out->data, s, len);
    out->data[len] = '\0';
    out->len = len;
    return NGX_OK;
}

/* Nginx.rputs(str), Nginx.echo(str) (data != NULL: with a newline). */
static carmine_value nginx_rputs(carmine_vm *vm, carmine_value self, int argc, const carmine_value *argv,
                                 carmine_value blk, void *data)
{
    (void)self, (void)argc, (void)blk;
    WITH_REQUEST(vm, r);
    (void)r;
    size_t len;
    const char *s = carmine_host_text(vm, argv[0], &len);
    if (s == NULL)
        return CARMINE_UNDEF;
    if (ngx_http_carmine_append(cur, s, len) != NGX_OK)
        return carmine_raise(vm, carmine_class_get(vm, "NoMemoryError"), "request pool exhausted");
    if (data != NULL)
        ngx_http_carmine_append(cur, "\n", 1);
    return carmine_nil();
}

/* Nginx.return(status): the phase's result (content: the response status). */
static carmine_value nginx_return(carmine_vm *vm, carmine_value self, int argc, const carmine_value *argv,
                                  carmine_value blk, void *data)
{
    UNUSED_ARGS;
    WITH_REQUEST(vm, r);
    (void)r;
    int64_t rc;
    if (carmine_to_int(vm, argv[0], &rc) != CARMINE_OK)
        return CARMINE_UNDEF;
    cur->rc = (ngx_int_t)rc;
    return argv[0];
}

/* Nginx.redirect(uri[, status]): with a status (301, 302, 303, 307, 308) a Location
 * response; without, an internal redirect once the script ends. */
static carmine_value nginx_redirect(carmine_vm *vm, carmine_value self, int argc, const carmine_value *argv,
                                    carmine_value blk, void *data)
{
    (void)self, (void)blk, (void)data;
    WITH_REQUEST(vm, r);
    ngx_str_t uri;
    if (ngx_http_carmine_arg_str(vm, r->pool, argv[0], &uri) != NGX_OK)
        return CARMINE_UNDEF;
    if (argc < 2 || carmine_is_nil(argv[1])) {
        cur->redirect = 1;
        cur->redirect_uri = uri;
        return carmine_nil();
    }
    int64_t status;
    if (carmine_to_int(vm, argv[1], &status) != CARMINE_OK)
        return CARMINE_UNDEF;
    ngx_table_elt_t *h = ngx_list_push(&r->headers_out.headers);
    if (h == NULL)
        return carmine_raise(vm, carmine_class_get(vm, "NoMemoryError"), "request pool exhausted");
    h->hash = 1;
    ngx_str_set(&h->key, "Location");
    h->value = uri;
    ngx_http_clear_location(r);
    r->headers_out.location = h;
    cur->rc = (ngx_int_t)status;
    return carmine_nil();
}

/* Nginx.errlogger(level, message) / Nginx.log. */
static carmine_value nginx_errlogger(carmine_vm *vm, carmine_value self, int argc, const carmine_value *argv,
                                     carmine_value blk, void *data)
{
    UNUSED_ARGS;
    int64_t level;
    if (carmine_to_int(vm, argv[0], &level) != CARMINE_OK)
        return CARMINE_UNDEF;
    size_t len;
    const char *msg = carmine_host_text(vm, argv[1], &len);
    if (msg == NULL)
        return CARMINE_UNDEF;
    if (level < NGX_LOG_STDERR || level > NGX_LOG_DEBUG)
        level = NGX_LOG_ERR;
    ngx_log_t *log = cur != NULL && cur->r != NULL ? cur->r->connection->log : worker_cycle->log;
    ngx_log_error((ngx_uint_t)level, log, 0, "%*s", len, msg);
    return carmine_nil();
}

/* Nginx::Request string fields: data is the offset of an ngx_str_t in the request. */
static carmine_value req_str_get(carmine_vm *vm, carmine_value self, int argc, const carmine_value *argv,
                                 carmine_value blk, void *data)
{
    (void)self, (void)argc, (void)argv, (void)blk;
    WITH_REQUEST(vm, r);
    return ngx_str_value(vm, (ngx_str_t *)((char *)r + (size_t)data));
}

static carmine_value req_str_set(carmine_vm *vm, carmine_value self, int argc, const carmine_value *argv,
                                 carmine_value blk, void *data)
{
    (void)self, (void)argc, (void)blk;
    WITH_REQUEST(vm, r);
    ngx_str_t s;
    if (ngx_http_carmine_arg_str(vm, r->pool, argv[0], &s) != NGX_OK)
        return CARMINE_UNDEF;
    *(ngx_str_t *)((char *)r + (size_t)data) = s;
    if ((size_t)data == offsetof(ngx_http_request_t, headers_out.content_type)) {
        r->headers_out.content_type_len = s.len;
        r->headers_out.content_type_lowcase = NULL;
    }
    return argv[0];
}

static carmine_value req_hostname(carmine_vm *vm, carmine_value self, int argc, const carmine_value *argv,
                                  carmine_value blk, void *data)
{
    UNUSED_ARGS;
    WITH_REQUEST(vm, r);
    return ngx_str_value(vm, &r->headers_in.server);
}

static carmine_value req_status(carmine_vm *vm, carmine_value self, int argc, const carmine_value *argv,
                                carmine_value blk, void *data)
{
    UNUSED_ARGS;
    WITH_REQUEST(vm, r);
    return carmine_int(vm, (int64_t)r->headers_out.status);
}

static carmine_value req_set_status(carmine_vm *vm, carmine_value self, int argc, const carmine_value *argv,
                                    carmine_value blk, void *data)
{
    UNUSED_ARGS;
    WITH_REQUEST(vm, r);
    int64_t st;
    if (carmine_to_int(vm, argv[0], &st) != CARMINE_OK)
        return CARMINE_UNDEF;
    r->headers_out.status = (ngx_uint_t)st;
    return argv[0];
}

/* The request body, already read by nginx (content handlers only); "" otherwise. */
static carmine_value req_body(carmine_vm *vm, carmine_value self, int argc, const carmine_value *argv,
                              carmine_value blk, void *data)
{
    UNUSED_ARGS;
    WITH_REQUEST(vm, r);
    carmine_value out = carmine_str(vm, "", 0);
    if (r->request_body == NULL || r->request_body->bufs == NULL)
        return out;
    for (ngx_chain_t *cl = r->request_body->bufs; cl; cl = cl->next) {
        ngx_buf_t *b = cl->buf;
        carmine_value piece;
        if (b->in_file) {
            size_t n = (size_t)(b->file_last - b->file_pos);
            u_char *p = ngx_pnalloc(r->pool, n);
            if (p == NULL || ngx_read_file(b->file, p, n, b->file_pos) != (ssize_t)n)
                return carmine_raise(vm, carmine_class_get(vm, "IOError"), "reading the buffered request body failed");
            piece = carmine_str(vm, (const char *)p, n);
        } else {
            piece = carmine_str(vm, (const char *)b->pos, (size_t)(b->last - b->pos));
        }
        if (carmine_call(vm, out, "<<", 1, &piece) == CARMINE_UNDEF)
            return CARMINE_UNDEF;
    }
    return out;
}

/* Headers: data 0 = headers_in, 1 = headers_out. */
static ngx_list_t *header_list(ngx_http_request_t *r, void *data)
{
    return data ? &r->headers_out.headers : &r->headers_in.headers;
}

static ngx_table_elt_t *header_find(ngx_list_t *list, ngx_str_t *key)
{
    for (ngx_list_part_t *part = &list->part; part; part = part->next) {
        ngx_table_elt_t *h = part->elts;
        for (ngx_uint_t i = 0; i < part->nelts; i++)
            if (h[i].hash != 0 && h[i].key.len == key->len && ngx_strncasecmp(h[i].key.data, key->data, key->len) == 0)
                return &h[i];
    }
    return NULL;
}

static int is_content_type(ngx_str_t *key)
{
    return key->len == 12 && ngx_strncasecmp(key->data, (u_char *)"Content-Type", 12) == 0;
}

static carmine_value headers_get(carmine_vm *vm, carmine_value self, int argc, const carmine_value *argv,
                                 carmine_value blk, void *data)
{
    (void)self, (void)argc, (void)blk;
    WITH_REQUEST(vm, r);
    ngx_str_t key;
    if (ngx_http_carmine_arg_str(vm, r->pool, argv[0], &key) != NGX_OK)
        return CARMINE_UNDEF;
    if (data && is_content_type(&key))
        return r->headers_out.content_type.len ? ngx_str_value(vm, &r->headers_out.content_type) : carmine_nil();
    ngx_table_elt_t *h = header_find(header_list(r, data), &key);
    return h ? ngx_str_value(vm, &h->value) : carmine_nil();
}

static carmine_value headers_set(carmine_vm *vm, carmine_value self, int argc, const carmine_value *argv,
                                 carmine_value blk, void *data)
{
    (void)self, (void)argc, (void)blk;
    WITH_REQUEST(vm, r);
    ngx_str_t key, val;
    if (ngx_http_carmine_arg_str(vm, r->pool, argv[0], &key) != NGX_OK)
        return CARMINE_UNDEF;
    int remove = carmine_is_nil(argv[1]);
    if (!remove && ngx_http_carmine_arg_str(vm, r->pool, argv[1], &val) != NGX_OK)
        return CARMINE_UNDEF;
    if (data && is_content_type(&key)) {
        if (remove) {
            ngx_str_null(&val);
        }
        r->headers_out.content_type = val;
        r->headers_out.content_type_len = val.len;
        r->headers_out.content_type_lowcase = NULL;
        return argv[1];
    }
    ngx_table_elt_t *h = header_find(header_list(r, data), &key);
    if (remove) {
        if (h)
            h->hash = 0;
        return argv[1];
    }
    if (h == NULL) {
        h = ngx_list_push(header_list(r, data));
        if (h == NULL)
            return carmine_raise(vm, carmine_class_get(vm, "NoMemoryError"), "request pool exhausted");
        h->key = key;
        h->lowcase_key = ngx_pnalloc(r->pool, key.len);
        if (h->lowcase_key == NULL)
            return carmine_raise(vm, carmine_class_get(vm, "NoMemoryError"), "request pool exhausted");
        ngx_strlow(h->lowcase_key, key.data, key.len);
    }
    h->hash = 1;
    h->value = val;
    return argv[1];
}

static carmine_value headers_all(carmine_vm *vm, carmine_value self, int argc, const carmine_value *argv,
                                 carmine_value blk, void *data)
{
    (void)self, (void)argc, (void)argv, (void)blk;
    WITH_REQUEST(vm, r);
    carmine_value hash = carmine_hash_new(vm);
    ngx_list_t *list = header_list(r, data);
    for (ngx_list_part_t *part = &list->part; part; part = part->next) {
        ngx_table_elt_t *h = part->elts;
        for (ngx_uint_t i = 0; i < part->nelts; i++)
            if (h[i].hash != 0)
                carmine_hash_set(vm, hash, ngx_str_value(vm, &h[i].key), ngx_str_value(vm, &h[i].value));
    }
    return hash;
}

/* Nginx::Var: r.var.name, r.var.set("name", value). */
static carmine_value var_get_named(carmine_vm *vm, ngx_http_request_t *r, const char *name, size_t len)
{
    ngx_str_t key;
    key.data = ngx_pnalloc(r->pool, len);
    if (key.data == NULL)
        return carmine_raise(vm, carmine_class_get(vm, "NoMemoryError"), "request pool exhausted");
    key.len = len;
    ngx_uint_t hash = ngx_hash_strlow(key.data, (u_char *)name, len);
    ngx_http_variable_value_t *v = ngx_http_get_variable(r, &key, hash);
    if (v == NULL || v->not_found)
        return carmine_nil();
    return carmine_str(vm, (const char *)v->data, v->len);
}

static carmine_value var_get(carmine_vm *vm, carmine_value self, int argc, const carmine_value *argv,
                             carmine_value blk, void *data)
{
    UNUSED_ARGS;
    WITH_REQUEST(vm, r);
    ngx_str_t name;
    if (ngx_http_carmine_arg_str(vm, r->pool, argv[0], &name) != NGX_OK)
        return CARMINE_UNDEF;
    return var_get_named(vm, r, (const char *)name.data, name.len);
}

static carmine_value var_set(carmine_vm *vm, carmine_value self, int argc, const carmine_value *argv,
                             carmine_value blk, void *data)
{
    UNUSED_ARGS;
    WITH_REQUEST(vm, r);
    ngx_str_t name, val;
    if (ngx_http_carmine_arg_str(vm, r->pool, argv[0], &name) != NGX_OK
        || ngx_http_carmine_arg_str(vm, r->pool, argv[1], &val) != NGX_OK)
        return CARMINE_UNDEF;
    ngx_http_core_main_conf_t *cmcf = ngx_http_get_module_main_conf(r, ngx_http_core_module);
    ngx_uint_t key = ngx_hash_strlow(name.data, name.data, name.len);
    ngx_http_variable_t *v = ngx_hash_find(&cmcf->variables_hash, key, name.data, name.len);
    if (v == NULL || !(v->flags & NGX_HTTP_VAR_CHANGEABLE) || !(v->flags & NGX_HTTP_VAR_INDEXED)) {
        return carmine_raise(vm, carmine_class_get(vm, "ArgumentError"),
                             "not a variable that can be set (declare it with `set $name ...`)");
    }
    ngx_http_variable_value_t *vv = &r->variables[v->index];
    vv->data = val.data;
    vv->len = val.len;
    vv->valid = 1;
    vv->not_found = 0;
    vv->no_cacheable = 0;
    return argv[1];
}

static carmine_value var_method_missing(carmine_vm *vm, carmine_value self, int argc, const carmine_value *argv,
                                        carmine_value blk, void *data)
{
    (void)blk, (void)data;
    WITH_REQUEST(vm, r);
    size_t len;
    const char *name = carmine_sym_name(vm, argv[0], &len);
    if (name == NULL)
        return carmine_raise(vm, carmine_class_get(vm, "TypeError"), "method name must be a Symbol");
    if (len > 1 && name[len - 1] == '=' && argc == 2) {
        carmine_value args[2] = {carmine_str(vm, name, len - 1), argv[1]};
        return var_set(vm, self, 2, args, blk, NULL);
    }
    if (argc != 1)
        return carmine_raise(vm, carmine_class_get(vm, "ArgumentError"), "Nginx::Var readers take no arguments");
    return var_get_named(vm, r, name, len);
}

/* Nginx::Connection. data selects the field. */
static carmine_value conn_field(carmine_vm *vm, carmine_value self, int argc, const carmine_value *argv,
                                carmine_value blk, void *data)
{
    (void)self, (void)argc, (void)argv, (void)blk;
    WITH_REQUEST(vm, r);
    switch ((intptr_t)data) {
    case 0:
        return ngx_str_value(vm, &r->connection->addr_text);
    case 1:
        return carmine_int(vm, (int64_t)ngx_inet_get_port(r->connection->sockaddr));
    case 2:
        return carmine_int(vm, (int64_t)r->connection->requests);
    }
    return carmine_nil();
}

#define RFIELD(f) ((void *)offsetof(ngx_http_request_t, f))

static const carmine_method_def request_methods[] = {
    {"uri", req_str_get, 0, 0, RFIELD(uri)},
    {"uri=", req_str_set, 1, 1, RFIELD(uri)},
    {"unparsed_uri", req_str_get, 0, 0, RFIELD(unparsed_uri)},
    {"args", req_str_get, 0, 0, RFIELD(args)},
    {"args=", req_str_set, 1, 1, RFIELD(args)},
    {"method", req_str_get, 0, 0, RFIELD(method_name)},
    {"request_method", req_str_get, 0, 0, RFIELD(method_name)},
    {"protocol", req_str_get, 0, 0, RFIELD(http_protocol)},
    {"the_request", req_str_get, 0, 0, RFIELD(request_line)},
    {"exten", req_str_get, 0, 0, RFIELD(exten)},
    {"content_type", req_str_get, 0, 0, RFIELD(headers_out.content_type)},
    {"content_type=", req_str_set, 1, 1, RFIELD(headers_out.content_type)},
    {"hostname", req_hostname, 0, 0, NULL},
    {"status", req_status, 0, 0, NULL},
    {"status=", req_set_status, 1, 1, NULL},
    {"body", req_body, 0, 0, NULL},
    {"read_body", req_body, 0, 0, NULL},
    {NULL, NULL, 0, 0, NULL}
};

static const struct {
    const char *name;
    int value;
} nginx_constants[] = {
    {"OK", NGX_OK}, {"ERROR", NGX_ERROR}, {"AGAIN", NGX_AGAIN}, {"BUSY", NGX_BUSY}, {"DONE", NGX_DONE},
    {"DECLINED", NGX_DECLINED},
    {"HTTP_OK", NGX_HTTP_OK}, {"HTTP_CREATED", NGX_HTTP_CREATED}, {"HTTP_ACCEPTED", NGX_HTTP_ACCEPTED},
    {"HTTP_NO_CONTENT", NGX_HTTP_NO_CONTENT}, {"HTTP_MOVED_PERMANENTLY", NGX_HTTP_MOVED_PERMANENTLY},
    {"HTTP_MOVED_TEMPORARILY", NGX_HTTP_MOVED_TEMPORARILY}, {"HTTP_SEE_OTHER", NGX_HTTP_SEE_OTHER},
    {"HTTP_NOT_MODIFIED", NGX_HTTP_NOT_MODIFIED}, {"HTTP_TEMPORARY_REDIRECT", NGX_HTTP_TEMPORARY_REDIRECT},
    {"HTTP_BAD_REQUEST", NGX_HTTP_BAD_REQUEST}, {"HTTP_UNAUTHORIZED", NGX_HTTP_UNAUTHORIZED},
    {"HTTP_FORBIDDEN", NGX_HTTP_FORBIDDEN}, {"HTTP_NOT_FOUND", NGX_HTTP_NOT_FOUND},
    {"HTTP_NOT_ALLOWED", NGX_HTTP_NOT_ALLOWED}, {"HTTP_REQUEST_TIME_OUT", NGX_HTTP_REQUEST_TIME_OUT},
    {"HTTP_CONFLICT", NGX_HTTP_CONFLICT}, {"HTTP_TOO_MANY_REQUESTS", 429},
    {"HTTP_INTERNAL_SERVER_ERROR", NGX_HTTP_INTERNAL_SERVER_ERROR},
    {"HTTP_NOT_IMPLEMENTED", NGX_HTTP_NOT_IMPLEMENTED}, {"HTTP_BAD_GATEWAY", NGX_HTTP_BAD_GATEWAY},
    {"HTTP_SERVICE_UNAVAILABLE", NGX_HTTP_SERVICE_UNAVAILABLE}, {"HTTP_GATEWAY_TIME_OUT", NGX_HTTP_GATEWAY_TIME_OUT},
    {"LOG_STDERR", NGX_LOG_STDERR}, {"LOG_EMERG", NGX_LOG_EMERG}, {"LOG_ALERT", NGX_LOG_ALERT},
    {"LOG_CRIT", NGX_LOG_CRIT}, {"LOG_ERR", NGX_LOG_ERR}, {"LOG_WARN", NGX_LOG_WARN},
    {"LOG_NOTICE", NGX_LOG_NOTICE}, {"LOG_INFO", NGX_LOG_INFO}, {"LOG_DEBUG", NGX_LOG_DEBUG},
    {NULL, 0}
};

static void ngx_http_carmine_define_api(carmine_vm *vm)
{
    carmine_value nginx = carmine_define_module(vm, "Nginx");
    for (int i = 0; nginx_constants[i].name; i++)
        carmine_const_set(vm, nginx, nginx_constants[i].name, carmine_int(vm, nginx_constants[i].value));
    carmine_define_module_function(vm, nginx, "rputs", nginx_rputs, 1, 1, NULL);
    carmine_define_module_function(vm, nginx, "echo", nginx_rputs, 1, 1, (void *)1);
    carmine_define_module_function(vm, nginx, "return", nginx_return, 1, 1, NULL);
    carmine_define_module_function(vm, nginx, "redirect", nginx_redirect, 1, 2, NULL);
    carmine_define_module_function(vm, nginx, "errlogger", nginx_errlogger, 2, 2, NULL);
    carmine_define_module_function(vm, nginx, "log", nginx_errlogger, 2, 2, NULL);
    carmine_define_module_function(vm, nginx, "module_name", carmine_host_data_string, 0, 0, (void *)"ngx_http_carmine_module");
    carmine_define_module_function(vm, nginx, "module_version", carmine_host_data_string, 0, 0, (void *)NGX_HTTP_CARMINE_VERSION);
    carmine_define_module_function(vm, nginx, "nginx_version", carmine_host_data_string, 0, 0, (void *)NGINX_VERSION);

    carmine_value request = carmine_define_class_under(vm, nginx, "Request", CARMINE_UNDEF);
    carmine_host_define_methods(vm, request, request_methods, 0, NULL);

    carmine_value hin = carmine_define_class_under(vm, nginx, "Headers_in", CARMINE_UNDEF);
    carmine_value hout = carmine_define_class_under(vm, nginx, "Headers_out", CARMINE_UNDEF);
    carmine_value classes[2] = {hin, hout};
    for (intptr_t i = 0; i < 2; i++) {
        carmine_define_method(vm, classes[i], "[]", headers_get, 1, 1, (void *)i);
        carmine_define_method(vm, classes[i], "[]=", headers_set, 2, 2, (void *)i);
        carmine_define_method(vm, classes[i], "all", headers_all, 0, 0, (void *)i);
        carmine_define_method(vm, classes[i], "to_h", headers_all, 0, 0, (void *)i);
    }

    carmine_value var = carmine_define_class_under(vm, nginx, "Var", CARMINE_UNDEF);
    carmine_define_method(vm, var, "get", var_get, 1, 1, NULL);
    carmine_define_method(vm, var, "set", var_set, 2, 2, NULL);
    carmine_define_method(vm, var, "method_missing", var_method_missing, 1, -1, NULL);

    carmine_value conn = carmine_define_class_under(vm, nginx, "Connection", CARMINE_UNDEF);
    carmine_define_method(vm, conn, "remote_ip", conn_field, 0, 0, (void *)0);
    carmine_define_method(vm, conn, "remote_port", conn_field, 0, 0, (void *)1);
    carmine_define_method(vm, conn, "requests", conn_field, 0, 0, (void *)2);

    static const char api_rb[] =
        "class Nginx::Request\n"
        "  def headers_in; Nginx::Headers_in.new; end\n"
        "  def headers_out; Nginx::Headers_out.new; end\n"
        "  def var; Nginx::Var.new; end\n"
        "  def connection; Nginx::Connection.new; end\n"
        "end\n"
        "class Nginx::Var\n"
        "  def respond_to_missing?(name, priv = false) = true\n"
        "end\n";
    carmine_eval_shared(vm, api_rb, sizeof api_rb - 1, "ngx_http_carmine_module", NULL);
}
