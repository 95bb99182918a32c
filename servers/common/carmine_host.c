/* See carmine_host.h for the invariants. */
#include <stdio.h>
#include <stdlib.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <string.h>
#include <unistd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include "carmine_host.h"

static int next_index;

int carmine_code_next_index(void)
{
    return next_index++;
}

carmine_host *carmine_host_open(void)
{
    carmine_host *h = calloc(1, sizeof *h);
    if (h == NULL)
        return NULL;
    h->vm = carmine_open();
    if (h->vm == NULL) {
        free(h);
        return NULL;
    }
    carmine_host_set_gc_malloc_limit(h, CARMINE_HOST_GC_MALLOC_LIMIT);
    return h;
}

void carmine_host_close(carmine_host *h)
{
    if (h == NULL)
        return;
    for (int i = 0; i < h->cache_len; i++)
        if (h->cache[i].script != NULL)
            carmine_script_free(h->vm, h->cache[i].script);
    free(h->cache);
    carmine_close(h->vm);
    free(h);
}

static carmine_cached_script *slot(carmine_host *h, int index)
{
    if (index >= h->cache_len) {
        int len = index + 16;
        carmine_cached_script *c = realloc(h->cache, (size_t)len * sizeof *c);
        if (c == NULL)
            return NULL;
        memset(c + h->cache_len, 0, (size_t)(len - h->cache_len) * sizeof *c);
        h->cache = c;
        h->cache_len = len;
    }
    return &h->cache[index];
}

int carmine_watch_open(carmine_watch *w)
{
    w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    w->changes = 1; /* a new cache slot (checked 0) is stat'ed */
    w->paths = NULL;
    w->path_count = w->path_cap = 0;
    return w->fd;
}

/* Watches `path` for changes of its content or metadata, and each directory named on it
 * for entries created, removed or renamed (a file or a symlinked release directory
 * replaced), or the directory itself moved. Adding a watch again only refreshes it, so
 * this runs after every batch of events: a watch the kernel dropped (its file deleted)
 * is made again on what the path names now. */
static void watch_path(const carmine_watch *w, const char *path)
{
    inotify_add_watch(w->fd, path, IN_MODIFY | IN_CLOSE_WRITE | IN_ATTRIB | IN_MOVE_SELF | IN_DELETE_SELF);
    char dir[4096];
    size_t n = strlen(path);
    if (n >= sizeof dir)
        return;
    memcpy(dir, path, n + 1);
    for (char *slash = strrchr(dir, '/'); slash != NULL; slash = strrchr(dir, '/')) {
        if (slash == dir)
            slash[1] = '\0';
        else
            *slash = '\0';
        inotify_add_watch(w->fd, dir,
                          IN_ONLYDIR | IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_MOVE_SELF
                              | IN_DELETE_SELF | IN_ATTRIB);
        if (slash == dir)
            break;
    }
}

int carmine_watch_add(carmine_watch *w, const char *path)
{
    if (w->fd < 0)
        return 0;
    for (int i = 0; i < w->path_count; i++)
        if (strcmp(w->paths[i], path) == 0)
            return 0;
    if (w->path_count == w->path_cap) {
        int cap = w->path_cap ? 2 * w->path_cap : 8;
        char **paths = realloc(w->paths, (size_t)cap * sizeof *paths);
        if (paths == NULL)
            return -1;
        w->paths = paths;
        w->path_cap = cap;
    }
    char *copy = strdup(path);
    if (copy == NULL)
        return -1;
    w->paths[w->path_count++] = copy;
    watch_path(w, copy);
    return 0;
}

void carmine_watch_drain(carmine_watch *w)
{
    char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
    while (read(w->fd, buf, sizeof buf) > 0)
        ;
    for (int i = 0; i < w->path_count; i++)
        watch_path(w, w->paths[i]);
    __atomic_add_fetch(&w->changes, 1, __ATOMIC_RELEASE);
}

void carmine_watch_close(carmine_watch *w)
{
    if (w->fd >= 0)
        close(w->fd);
    __atomic_store_n(&w->fd, -1, __ATOMIC_RELEASE);
    for (int i = 0; i < w->path_count; i++)
        free(w->paths[i]);
    free(w->paths);
    w->paths = NULL;
    w->path_count = w->path_cap = 0;
}

/* Whether a file script may be used without a stat, else records the check it gets (see
 * the invariants in the header). */
static int unchanged_since_check(carmine_host *h, carmine_cached_script *c)
{
    const carmine_watch *w = h->watch;
    if (w == NULL || __atomic_load_n(&w->fd, __ATOMIC_RELAXED) < 0)
        return 0;
    unsigned long changes = __atomic_load_n(&w->changes, __ATOMIC_ACQUIRE);
    struct timespec now;
    clock_gettime(CLOCK_REALTIME_COARSE, &now);
    if (c->script != NULL && c->checked == changes && c->checked_at == now.tv_sec)
        return 1;
    c->checked = changes;
    c->checked_at = now.tv_sec;
    return 0;
}

carmine_script *carmine_host_script(carmine_host *h, const carmine_code *code)
{
    carmine_cached_script *c = slot(h, code->index);
    if (c == NULL)
        return NULL;
    if (!code->is_file) {
        if (c->script == NULL)
            c->script = carmine_compile(h->vm, code->src, code->len, code->path);
        return c->script;
    }
    if (unchanged_since_check(h, c))
        return c->script;
    struct stat st;
    if (stat(code->path, &st) != 0) {
        /* carmine_compile_file reports the Errno exception. */
        if (c->script != NULL) {
            carmine_script_free(h->vm, c->script);
            c->script = NULL;
        }
        return carmine_compile_file(h->vm, code->path);
    }
    if (c->script != NULL && c->mtime.tv_sec == st.st_mtim.tv_sec && c->mtime.tv_nsec == st.st_mtim.tv_nsec
        && c->size == st.st_size && c->ino == st.st_ino)
        return c->script;
    if (c->script != NULL)
        carmine_script_free(h->vm, c->script);
    c->script = carmine_compile_file(h->vm, code->path);
    c->mtime = st.st_mtim;
    c->size = st.st_size;
    c->ino = st.st_ino;
    return c->script;
}

void carmine_host_compile_all(carmine_host *h, carmine_code *const *codes, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (carmine_host_script(h, codes[i]) == NULL)
            carmine_error_clear(h->vm);
    }
}

void carmine_host_set_gc_malloc_limit(carmine_host *h, size_t bytes)
{
    carmine_set_gc_malloc_limit(h->vm, bytes);
    h->gc_growth = bytes / 4;
    carmine_set_gc_after_run(h->vm, h->gc_every > 0 ? 0 : h->gc_growth);
}

void carmine_host_set_gc_every(carmine_host *h, unsigned runs)
{
    h->gc_every = runs;
    carmine_set_gc_after_run(h->vm, runs > 0 ? 0 : h->gc_growth);
}

void carmine_host_ran(carmine_host *h)
{
    if (h->gc_every == 0 || ++h->runs < h->gc_every)
        return;
    h->runs = 0;
    carmine_gc_start(h->vm);
#ifdef __GLIBC__
    /* What the collection freed goes back to the system, not only to malloc's lists. */
    malloc_trim(0);
#endif
}

carmine_status carmine_host_run(carmine_host *h, carmine_script *script, carmine_value *result)
{
    carmine_status st = carmine_run(h->vm, script, result);
    carmine_host_ran(h);
    return st;
}

const char *carmine_host_text_of(carmine_vm *vm, carmine_value v, size_t *len)
{
    carmine_value str = carmine_to_s(vm, v);
    if (str == CARMINE_UNDEF)
        return NULL;
    const char *s = carmine_str_ptr(vm, str, len);
    if (s == NULL)
        carmine_raise(vm, carmine_class_get(vm, "TypeError"), "can't convert to String (to_s returned no String)");
    return s;
}

carmine_value carmine_host_data_string(carmine_vm *vm, carmine_value self, int argc, const carmine_value *argv,
                                       carmine_value blk, void *data)
{
    (void)self, (void)argc, (void)argv, (void)blk;
    return carmine_cstr(vm, (const char *)data);
}

void carmine_host_define_methods(carmine_vm *vm, carmine_value klass, const carmine_method_def *defs,
                                 int same_data, void *data)
{
    for (const carmine_method_def *d = defs; d->name; d++)
        carmine_define_method(vm, klass, d->name, d->f, d->min_args, d->max_args, same_data ? data : d->data);
}

void carmine_host_each_error_line(carmine_host *h, void (*line)(void *arg, const char *text), void *arg)
{
    const char *report = carmine_error_report(h->vm);
    if (report == NULL || *report == '\0') {
        const char *cls = carmine_error_class(h->vm), *msg = carmine_error_message(h->vm);
        char buf[1024];
        snprintf(buf, sizeof buf, "%s: %s", cls ? cls : "error", msg ? msg : "(no message)");
        line(arg, buf);
        return;
    }
    const char *p = report;
    while (*p) {
        while (*p == '\t' || *p == ' ')
            p++;
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        char *text = malloc(n + 1);
        if (text == NULL)
            return;
        memcpy(text, p, n);
        text[n] = '\0';
        if (n > 0)
            line(arg, text);
        free(text);
        p += n;
        if (*p == '\n')
            p++;
    }
}
