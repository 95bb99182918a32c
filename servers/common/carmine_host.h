/*
 * carmine_host: what mod_carmine (Apache) and ngx_http_carmine_module (nginx) share — a
 * VM per server thread and the scripts it has compiled, recompiled when a file changes.
 *
 * Invariants:
 * - A carmine_code is configuration: made while the server reads its config (one thread),
 *   never changed afterwards, shared by every thread and process. Its `index` is unique in
 *   the process and names its slot in every host's cache.
 * - A carmine_host belongs to one thread at a time (Apache: one per worker thread; nginx:
 *   one per worker process). It owns its VM and every carmine_script in its cache; a
 *   script is compiled at its first use in that host and reused until the file's mtime,
 *   size or inode changes (inline code is compiled once).
 * - Without a carmine_watch a script file is stat'ed at each use. With one (drained by the
 *   server: nginx's event loop, a thread of Apache's parent process), the stat is skipped
 *   while no change was counted since the last stat in the same second: the inotify
 *   events cover local filesystems, the once-a-second stat those it is blind to (NFS).
 * - A carmine_watch may live in memory shared by several processes (Apache: the parent
 *   drains it, the children's hosts read it). Hosts only read `fd` (whether there is a
 *   watch) and `changes`, atomically; `paths` and the descriptor itself are used only by
 *   the process that opened the watch. A change is counted after the paths were watched
 *   again, so a change the watch missed (a replaced file not yet watched) precedes the
 *   count and the stat that follows it.
 * - `gc_every` runs (when set) end with a full collection, between requests: the VM's heap
 *   then holds about the live set plus that many runs' garbage instead of growing to the
 *   collector's own trigger (16 MiB of buffer growth), which matters when a process keeps
 *   several VMs. The collection is followed by malloc_trim (glibc), so that the memory it
 *   freed leaves the process instead of staying in malloc's arenas.
 * - Without `gc_every`, a run that leaves a quarter of the GC malloc limit of new buffers
 *   (String, Array, Hash storage) since the VM's last collection ends with a full
 *   collection and malloc_trim, made by libcarmine (carmine_set_gc_after_run, no call per
 *   request); inside a run the VM collects at the limit itself. The limit is CARMINE_HOST_GC_MALLOC_LIMIT unless the server's directive
 *   changes it, instead of libcarmine's 16 MiB: a server keeps a VM per worker (Apache
 *   a few per process), and each would otherwise hold up to 16 MiB of garbage and keep
 *   growing for thousands of requests. A run that allocates nothing costs one comparison.
 * - Nothing here raises into the server: failures are returned, and the VM's error
 *   (carmine_error_*) describes them.
 */
#ifndef CARMINE_HOST_H
#define CARMINE_HOST_H

#include <stddef.h>
#include <time.h>
#include <sys/types.h>
#include "carmine.h"

typedef struct carmine_code {
    int index;        /* slot in each host's cache */
    int is_file;      /* 1: `path` is a script file, read at first use and when it changes */
    const char *path; /* the file, or for inline code the name backtraces show */
    const char *src;  /* inline code (NUL-terminated) */
    size_t len;
} carmine_code;

typedef struct carmine_cached_script {
    carmine_script *script;
    struct timespec mtime;
    off_t size;
    ino_t ino;
    unsigned long checked; /* the watch's `changes` at the last stat */
    time_t checked_at;     /* the second of the last stat (CLOCK_REALTIME_COARSE) */
} carmine_cached_script;

/* inotify watches on script files and the directories on their paths. `changes` counts
 * the batches of events drained: a script stat'ed at an older count is stat'ed again. */
typedef struct carmine_watch {
    int fd;                /* the inotify descriptor (non-blocking); -1: none */
    unsigned long changes; /* atomic */
    char **paths;          /* the script files watched (owned copies) */
    int path_count, path_cap;
} carmine_watch;

/* Opens w's inotify descriptor; -1 (w->fd too) when the kernel has none to give. */
int carmine_watch_open(carmine_watch *w);

/* Watches the script file `path` and each directory on it, now and again after every
 * batch of events; every script file is added before hosts use the watch. 0, or -1 when
 * out of memory: close the watch then (hosts stat at each use), as the file's changes
 * would otherwise go unseen for up to a second. */
int carmine_watch_add(carmine_watch *w, const char *path);

/* Reads every pending event of w->fd, watches the paths again (a file replaced by a
 * rename is a new inode) and counts a change: call it when w->fd is readable. */
void carmine_watch_drain(carmine_watch *w);

/* Closes the descriptor (unless -1) and frees the paths. */
void carmine_watch_close(carmine_watch *w);

typedef struct carmine_host {
    carmine_vm *vm;
    const carmine_watch *watch; /* not owned; NULL: a script file is stat'ed at each use */
    carmine_cached_script *cache;
    int cache_len;
    unsigned gc_every; /* a full collection every that many runs; 0: by growth */
    size_t gc_growth;  /* with gc_every 0: a run ends with a collection once this many bytes
                          of new buffers were allocated since the last collection (made by
                          libcarmine: carmine_set_gc_after_run); 0: never */
    unsigned runs;     /* since the last collection made here */
    unsigned tasks;    /* runs suspended in the VM (carmine_start), counted by the server */
} carmine_host;

/* The next free code index (config time only). */
int carmine_code_next_index(void);

/* The servers' default for carmine_set_gc_malloc_limit (their directives change it). */
#define CARMINE_HOST_GC_MALLOC_LIMIT (1024 * 1024)

/* A new host with a fresh VM, or NULL. */
carmine_host *carmine_host_open(void);
void carmine_host_close(carmine_host *h);

/* The compiled script of `code`, compiling (or recompiling a changed file) when needed.
 * NULL when the file cannot be read or does not compile: carmine_error_* say why. */
carmine_script *carmine_host_script(carmine_host *h, const carmine_code *code);

/* Compiles each of the `n` scripts of `codes` now (a server does it before its first request,
 * then releases the code pages booting and compiling ran). A script that does not compile
 * is left to be compiled again, and its error reported, when a request runs it. */
void carmine_host_compile_all(carmine_host *h, carmine_code *const *codes, size_t n);

/* Sets the VM's GC malloc limit (0: libcarmine's default) and gc_growth to a quarter of it
 * (the VM's carmine_set_gc_after_run, unless gc_every is set). */
void carmine_host_set_gc_malloc_limit(carmine_host *h, size_t bytes);

/* A full collection every `runs` runs (0: by growth, see gc_growth). */
void carmine_host_set_gc_every(carmine_host *h, unsigned runs);

/* Runs `script` isolated (carmine_run), then collects as gc_every / gc_growth say. */
carmine_status carmine_host_run(carmine_host *h, carmine_script *script, carmine_value *result);

/* Counts a run that ended some other way (a task that was suspended) towards `gc_every`. */
void carmine_host_ran(carmine_host *h);

/* The bytes of v.to_s; NULL (an exception pending) when to_s raised or did not return
 * a String. Valid while the string is alive. */
const char *carmine_host_text_of(carmine_vm *vm, carmine_value v, size_t *len);

/* The bytes of v if it is a String, else of v.to_s (see carmine_host_text_of). Inline: the
 * request API reads a String argument on every call. */
static inline const char *carmine_host_text(carmine_vm *vm, carmine_value v, size_t *len)
{
    const char *s = carmine_str_ptr(vm, v, len);
    return s != NULL ? s : carmine_host_text_of(vm, v, len);
}

/* A table of C methods, ended by an entry with a NULL name. */
typedef struct carmine_method_def {
    const char *name;
    carmine_func f;
    int min_args, max_args;
    void *data;
} carmine_method_def;

/* Defines every method of `defs` on klass, each with its own data, or with `data` for all
 * when `same_data` is set. */
void carmine_host_define_methods(carmine_vm *vm, carmine_value klass, const carmine_method_def *defs,
                                 int same_data, void *data);

/* A C method that returns its `data` (a C string) as a String: module_name and the like. */
carmine_value carmine_host_data_string(carmine_vm *vm, carmine_value self, int argc, const carmine_value *argv,
                                       carmine_value blk, void *data);

/* Calls line(arg, text) for each line of the VM's error report (class, message and
 * backtrace of the exception that ended the last call). */
void carmine_host_each_error_line(carmine_host *h, void (*line)(void *arg, const char *text), void *arg);

#endif
