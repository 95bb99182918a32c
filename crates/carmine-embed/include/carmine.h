/*
 * carmine.h — the C embedding API of Carmine, a Ruby implementation (libcarmine).
 *
 *   #include <carmine.h>
 *   carmine_vm *vm = carmine_open();
 *   carmine_script *s = carmine_compile(vm, src, len, "handler.rb");   // once
 *   for (;;) {                                                       // per request
 *       carmine_value result;
 *       if (carmine_run(vm, s, &result) != CARMINE_OK)
 *           log(carmine_error_class(vm), carmine_error_message(vm));
 *   }
 *   carmine_script_free(vm, s);
 *   carmine_close(vm);
 *
 * Build: cc app.c $(pkg-config --cflags --libs carmine)   (see docs/embedding.md)
 *
 * Rules every host must know (docs/embedding.md has the details):
 *
 * - VMs. Any number of VMs per process; each has its own heap, globals, constants and
 *   classes, and nothing of one is visible to another. A VM may be used by one thread at
 *   a time (any thread; it may move between threads between calls). Different VMs run in
 *   parallel on different threads. A call made while another thread is inside the same
 *   VM returns CARMINE_BUSY (functions returning a value return CARMINE_UNDEF).
 *   libcarmine installs no signal handlers and keeps no per-thread state between calls.
 *
 * - Errors. Nothing in libcarmine aborts the process or unwinds (longjmp, C++ or Rust
 *   panics) into the host. A Ruby exception that ends a call is returned as data: the
 *   call's status is not CARMINE_OK (or its value is CARMINE_UNDEF) and carmine_error_*()
 *   describe it until the next call that runs Ruby code.
 *
 * - Values. carmine_value is a machine word. Values held in local variables (the C stack
 *   or registers of the thread using the VM) are found by the collector and stay alive.
 *   A value stored anywhere else (a global, a struct on the C heap, another thread's
 *   stack) must be registered with carmine_gc_register() until it is no longer used.
 *   A value belongs to the VM that made it: never pass it to another VM.
 *
 * - Isolation. carmine_run() and carmine_eval() run a script as one isolated unit:
 *   afterwards the global variables, top-level constants, top-level methods, Object's
 *   class variables and instance variables of `main` it created are removed (those it
 *   changed are restored), `$!` is cleared, its threads are stopped, `at_exit` blocks run,
 *   and the code compiled for it is freed (a carmine_script keeps its code until
 *   carmine_script_free). State made by the host (C calls, carmine_run_shared,
 *   carmine_eval_shared) persists. Changes a script makes inside existing classes or
 *   modules other than Object (reopening String, adding a method to a host class) persist:
 *   see docs/embedding.md, "What persists between runs".
 *
 * - Limits. carmine_set_timeout() and carmine_set_memory_limit() end a runaway run with
 *   an exception (Carmine::TimeoutError, NoMemoryError) that scripts cannot rescue for
 *   good; the status is CARMINE_LIMIT.
 *
 * - Suspension. carmine_start() runs a script like carmine_run() but on a fiber of its
 *   own: where the script would block (sleep, or IO on a descriptor that is not ready)
 *   the call returns CARMINE_SUSPENDED with what to wait for (carmine_wait), and the host
 *   calls carmine_resume() when that happened, from its event loop. Any number of runs
 *   may be suspended in one VM at once, each isolated from the others and from runs
 *   started meanwhile (see "Suspendable runs" in docs/embedding.md).
 *
 * Strings are byte strings with a length; Ruby strings made by this API are UTF-8.
 * Every `const char *` that the API returns is owned by the VM (see each function).
 */
#ifndef CARMINE_H
#define CARMINE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CARMINE_API_VERSION 3

typedef struct carmine_vm carmine_vm;         /* one VM (opaque) */
typedef struct carmine_script carmine_script; /* compiled code, reusable (opaque) */
typedef uint64_t carmine_value;               /* a Ruby value of one VM */

/* Not a Ruby value: returned by functions that failed (an exception is pending, see
 * carmine_error_*), and returned by a C method to raise the pending exception. */
#define CARMINE_UNDEF ((carmine_value)0x34)

typedef enum carmine_status {
    CARMINE_OK = 0,
    CARMINE_EXCEPTION = 1, /* an uncaught Ruby exception ended the call (carmine_error_*) */
    CARMINE_EXIT = 2,      /* the script called exit/exit!/abort (carmine_exit_status) */
    CARMINE_LIMIT = 3,     /* a timeout or the memory cap ended the run (carmine_error_*) */
    CARMINE_BUSY = 4,      /* another thread is using this VM, or a run is already active */
    CARMINE_INVALID = 5,   /* a NULL handle or an invalid argument */
    CARMINE_BUG = 6,       /* an internal error was caught; the VM must be closed */
    CARMINE_SUSPENDED = 7  /* carmine_start/carmine_resume: the run waits (carmine_wait) */
} carmine_status;

typedef enum carmine_type {
    CARMINE_T_UNDEF = 0,
    CARMINE_T_NIL,
    CARMINE_T_FALSE,
    CARMINE_T_TRUE,
    CARMINE_T_INTEGER, /* Fixnum or Bignum */
    CARMINE_T_FLOAT,
    CARMINE_T_SYMBOL,
    CARMINE_T_STRING,
    CARMINE_T_ARRAY,
    CARMINE_T_HASH,
    CARMINE_T_PROC,
    CARMINE_T_CLASS,
    CARMINE_T_MODULE,
    CARMINE_T_DATA,    /* made by carmine_data_new */
    CARMINE_T_OBJECT   /* anything else */
} carmine_type;

/* ---- VM lifecycle ------------------------------------------------------------------ */

/* A new VM with the core classes loaded, or NULL if it could not be created. */
carmine_vm *carmine_open(void);
/* Runs nothing more and frees everything the VM owns (its heap, scripts not yet freed,
 * registered roots). Data objects' free functions are called. Runs still suspended are
 * cancelled first (carmine_cancel: their ensure clauses run). vm may be NULL. */
void carmine_close(carmine_vm *vm);
/* Drops the process's mappings of libcarmine's machine code and read-only data (the
 * pages of the library, or of the module or program it is linked into, that were never
 * written); each page comes back from the page cache, with a minor fault, when it is next
 * used. Opening a VM runs every builtin's init code once: a host that keeps its VMs for
 * long (a server worker) calls this after opening them, so that its resident code is
 * what its requests run. Returns the bytes advised (0 where unsupported). Process-wide,
 * safe at any time, from any thread. */
size_t carmine_release_code_pages(void);
/* "carmine 0.1.0 (Ruby 3.4 compatible)"; static storage. */
const char *carmine_version(void);

/* One pointer the host attaches to the VM (e.g. the current request); C methods read it
 * with carmine_userdata(), which is a plain read (it does not enter the VM, so it is
 * cheap and never CARMINE_BUSY). Not touched by the VM. */
void carmine_set_userdata(carmine_vm *vm, void *userdata);
void *carmine_userdata(carmine_vm *vm);

/* ---- scripts --------------------------------------------------------------------------- */

/* Compiles Ruby source once (filename is used in backtraces and __FILE__). NULL on a
 * SyntaxError (described by carmine_error_*) or an invalid argument. */
carmine_script *carmine_compile(carmine_vm *vm, const char *src, size_t len, const char *filename);
/* Reads and compiles a file; NULL if it cannot be read (Errno::*) or has a SyntaxError. */
carmine_script *carmine_compile_file(carmine_vm *vm, const char *path);
/* Loads a program compiled ahead of time by `carmine --compile FILE.rb -o FILE.cmb`
 * (verified, not parsed: no Prism, no compiler at load). It runs like a script compiled
 * from source; __FILE__ and backtraces show the source path it was compiled from. NULL
 * with a LoadError ("invalid bytecode: ...") for bytes that are not bytecode of this
 * build of Carmine, or an Errno::* error if the file cannot be read. */
carmine_script *carmine_load_bytecode(carmine_vm *vm, const void *bytes, size_t len);
carmine_script *carmine_load_bytecode_file(carmine_vm *vm, const char *path);
/* Frees the compiled code (it is collected once no method or proc made by it is alive). */
void carmine_script_free(carmine_vm *vm, carmine_script *script);

/* Runs a script as an isolated unit (see "Isolation" above). *result (may be NULL) gets
 * the value of the script's last expression on CARMINE_OK, else CARMINE_UNDEF. A run
 * may not start inside another run of the same VM (from a C method): CARMINE_BUSY. */
carmine_status carmine_run(carmine_vm *vm, carmine_script *script, carmine_value *result);
/* Compiles, runs as carmine_run does, and frees the code. */
carmine_status carmine_eval(carmine_vm *vm, const char *src, size_t len, const char *filename,
                            carmine_value *result);
/* As carmine_run / carmine_eval but not isolated: everything the script defines stays
 * (for setup code: helper classes, preloaded libraries, shared connections). Limits apply. */
carmine_status carmine_run_shared(carmine_vm *vm, carmine_script *script, carmine_value *result);
carmine_status carmine_eval_shared(carmine_vm *vm, const char *src, size_t len,
                                   const char *filename, carmine_value *result);

/* ---- suspendable runs ---------------------------------------------------------------- */

/* A run in progress, suspended between carmine_start/carmine_resume calls (opaque). */
typedef struct carmine_task carmine_task;

/* Events of a carmine_wait (the values of Ruby's IO::READABLE and IO::WRITABLE). */
#define CARMINE_READABLE 1
#define CARMINE_WRITABLE 4

/* What a suspended run waits for. The host resumes it when `fd` is ready for one of
 * `events`, or once `timeout_ms` milliseconds have passed, whichever comes first. */
typedef struct carmine_wait {
    int events;         /* CARMINE_READABLE and/or CARMINE_WRITABLE; 0: only time */
    int fd;             /* the descriptor to watch; -1 when events is 0 */
    int64_t timeout_ms; /* resume after this long at the latest (rounded up); -1: no limit.
                           The length of a sleep, an IO wait's timeout, or what is left of
                           the run's carmine_set_timeout, whichever is shortest. */
} carmine_wait;

/* Starts an isolated run of script (as carmine_run) on a fiber of its own. When the script
 * waits — sleep, or reading/writing/connecting an IO whose descriptor is not ready — the
 * run is suspended: CARMINE_SUSPENDED, *task set to its handle and *wait to what it waits
 * for (the host watches that, e.g. with a timer and its event loop, and never blocks).
 * Otherwise the run has ended and the status is carmine_run's (*task is NULL, *result
 * the value on CARMINE_OK). wait and result may be NULL.
 *
 * A run waits by blocking instead of suspending when it cannot suspend: inside a C method
 * (the host's frames would be suspended with it), while Ruby threads are alive unless the
 * host lets them run outside the VM (carmine_set_notify; otherwise they run only while a
 * run waits in place, Thread#join and Thread#value included), in a fiber the script
 * made, and for Mutex, Queue, ConditionVariable, Thread#join and Thread#value waits
 * unless the host set a waker (carmine_set_waker). Between two steps of any runs the VM is as the
 * host left it (a suspended run's changes are set aside until it resumes), so the host
 * may start other runs, use carmine_run, or call Ruby in the meantime. */
carmine_status carmine_start(carmine_vm *vm, carmine_script *script, carmine_task **task,
                             carmine_wait *wait, carmine_value *result);
/* Continues a suspended run. ready: the events of its wait that happened
 * (CARMINE_READABLE/CARMINE_WRITABLE), 0 when its timeout passed. It may suspend again
 * (CARMINE_SUSPENDED, *wait updated, the same task) or end (any other status; the task
 * handle is freed). Resuming early is harmless (a sleep returns early; an IO wait checks
 * its descriptor and suspends again if it is not ready). */
carmine_status carmine_resume(carmine_vm *vm, carmine_task *task, int ready, carmine_wait *wait,
                              carmine_value *result);
/* Ends a suspended run without resuming its wait (the client went away): its ensure
 * clauses and at_exit blocks run (any wait in them blocks), its isolation is undone, and
 * the handle is freed. The status says how its cleanup ended (CARMINE_OK, or an
 * exception raised by an ensure clause). */
carmine_status carmine_cancel(carmine_vm *vm, carmine_task *task);
/* Runs suspended in the VM now. */
size_t carmine_task_count(carmine_vm *vm);

/* Lets Mutex, Queue, SizedQueue and ConditionVariable waits of a suspendable run suspend
 * it too (without a waker they block). What ends such a wait is another run's doing — a
 * push, an unlock, a signal — which the host cannot watch, so the VM tells it: a run
 * suspended there reports carmine_wait {events 0, fd -1, timeout_ms: the wait's timeout
 * or -1}, and when another run (or C code calling Ruby) wakes it, wake(data, task) is
 * called; the host then calls carmine_resume(vm, task, 0, ...) from its event loop (the
 * run checks its condition again and may suspend again). wake is called on the thread
 * using the VM, from inside that other call: it must not call into the VM (nginx posts
 * an event). NULL removes the waker. */
typedef void (*carmine_wake_func)(void *data, carmine_task *task);
void carmine_set_waker(carmine_vm *vm, carmine_wake_func wake, void *data);
/* Lets the VM's Ruby threads run while the host is outside the VM (between its calls),
 * so that a run may suspend while threads it started are alive: Thread#join and
 * Thread#value suspend it like a Queue wait (with a waker set), and its threads go on
 * meanwhile. Each outermost call then gives the VM's giant lock up when it returns (if
 * threads are alive) and takes it back when the host calls again, ahead of the threads
 * (a thread computing hands it over at its next safepoint). Isolation holds: a thread
 * started by a run belongs to it and runs Ruby code only while that run's changes are
 * the VM's — while the run itself runs, and, for one suspended run at a time (they
 * take turns, one per call that returns; notify is also called, with nothing to
 * deliver, when the current run's last thread ends while others wait), while the host is
 * outside; threads of the others wait meanwhile. A run's threads are killed when it ends. While the host is
 * outside, a thread that calls a C method gets a ThreadError (the host's functions are
 * called only on its own thread, inside a call), and a waker call that a thread causes
 * is not made on that thread: the task is queued and notify(data) called (on that
 * thread: it must only signal the host's loop, e.g. write an eventfd); the host then
 * calls carmine_deliver_wakes from its loop, which calls the waker for each task queued
 * that is still suspended, and returns how many were queued. While the host is outside,
 * its stack is not scanned: a value it keeps between calls must be registered
 * (carmine_gc_register). One host thread only.
 * NULL: threads run only while the host is inside the VM again. */
typedef void (*carmine_notify_func)(void *data);
void carmine_set_notify(carmine_vm *vm, carmine_notify_func notify, void *data);
size_t carmine_deliver_wakes(carmine_vm *vm);
/* One pointer of the host's per suspended task (e.g. its request), kept until the task
 * ends; plain field accesses, safe inside a waker. */
void carmine_task_set_data(carmine_task *task, void *data);
void *carmine_task_data(const carmine_task *task);

/* ---- limits (0 = no limit; they apply to every later run, eval and call) ------------- */

/* Wall-clock time one run may take, in milliseconds. When it is up, the script gets a
 * Carmine::TimeoutError (a subclass of Exception, not StandardError) at its next
 * safepoint, again at every later one until the run ends, and sleep/IO waits wake up.
 * For a suspendable run (carmine_start) the time it spends suspended counts. */
void carmine_set_timeout(carmine_vm *vm, uint64_t milliseconds);
/* Bytes the VM's heap (object slots and the buffers of strings, arrays, hashes) may
 * grow to. Past the cap, after a collection, the run gets NoMemoryError. */
void carmine_set_memory_limit(carmine_vm *vm, size_t bytes);
/* Bytes of new buffers (String, Array and Hash storage) after which the VM collects
 * (0: the default, 16 MiB). A VM holds up to about this much garbage; a server that keeps
 * many VMs in a process lowers it (the web-server modules use 1 MiB). Not a cap. */
void carmine_set_gc_malloc_limit(carmine_vm *vm, size_t bytes);
/* A run (carmine_run, carmine_eval, a task of carmine_start when it ends) that leaves
 * at least `bytes` of new buffers since the VM's last collection ends with a full
 * collection, and the memory it freed goes back to the system (glibc: malloc_trim).
 * 0 (the default): never. What carmine_gc_if_grown does between runs, without a call
 * per run: a run that allocated nothing pays one comparison. */
void carmine_set_gc_after_run(carmine_vm *vm, size_t bytes);
/* Bytes the VM's heap uses now (object pages plus tracked buffers). */
size_t carmine_memory_usage(carmine_vm *vm);

/* ---- errors ------------------------------------------------------------------------- */

/* The exception that ended the last failed call, as data. The strings stay valid until
 * the next call that runs Ruby code or carmine_error_clear(). NULL / 0 when none. */
const char *carmine_error_class(carmine_vm *vm);      /* "ZeroDivisionError" */
const char *carmine_error_message(carmine_vm *vm);    /* "divided by 0" */
size_t carmine_error_backtrace_size(carmine_vm *vm);
const char *carmine_error_backtrace(carmine_vm *vm, size_t i); /* "handler.rb:3:in 'foo'" */
/* The whole report as `ruby` prints it for an uncaught exception. */
const char *carmine_error_report(carmine_vm *vm);
/* The exception object (nil when none); keep it with carmine_gc_register if stored. */
carmine_value carmine_error_value(carmine_vm *vm);
/* The status given to exit/exit!/abort when a call returned CARMINE_EXIT. */
int carmine_exit_status(carmine_vm *vm);
void carmine_error_clear(carmine_vm *vm);

/* Makes `exc_class.new(message)` the pending exception and returns CARMINE_UNDEF: a C
 * method raises with `return carmine_raise(vm, cls, "message");`. */
carmine_value carmine_raise(carmine_vm *vm, carmine_value exc_class, const char *message);

/* ---- output ------------------------------------------------------------------------- */

/* Where `$stdout` / `$stderr` of the VM write (puts, print, p, warn, error reports):
 * write(data, bytes, len) is called with each piece. NULL restores the process's own
 * descriptors. Set by the host, so it persists across runs. */
typedef void (*carmine_write_func)(void *data, const char *bytes, size_t len);
void carmine_set_stdout(carmine_vm *vm, carmine_write_func write, void *data);
void carmine_set_stderr(carmine_vm *vm, carmine_write_func write, void *data);

/* ---- values ------------------------------------------------------------------------- */

carmine_value carmine_nil(void);
carmine_value carmine_true(void);
carmine_value carmine_false(void);
carmine_value carmine_bool(int b);
int carmine_is_nil(carmine_value v);
int carmine_truthy(carmine_value v); /* neither nil nor false (nor CARMINE_UNDEF) */
carmine_type carmine_type_of(carmine_vm *vm, carmine_value v);

carmine_value carmine_int(carmine_vm *vm, int64_t i);
/* An Integer that fits in int64_t (a Float is not converted): CARMINE_OK, else
 * CARMINE_EXCEPTION with a TypeError or RangeError pending. */
carmine_status carmine_to_int(carmine_vm *vm, carmine_value v, int64_t *out);
carmine_value carmine_float(carmine_vm *vm, double d);
/* A Float or an Integer as double; else CARMINE_EXCEPTION (TypeError). */
carmine_status carmine_to_float(carmine_vm *vm, carmine_value v, double *out);

carmine_value carmine_str(carmine_vm *vm, const char *bytes, size_t len);
carmine_value carmine_cstr(carmine_vm *vm, const char *nul_terminated);
/* The bytes of a String (NULL if v is not a String), NUL-terminated, *len (may be NULL)
 * without the NUL. Valid while the string is alive and not modified. */
const char *carmine_str_ptr(carmine_vm *vm, carmine_value v, size_t *len);
/* v.to_s / v.inspect as a String; CARMINE_UNDEF if that raised. */
carmine_value carmine_to_s(carmine_vm *vm, carmine_value v);
carmine_value carmine_inspect(carmine_vm *vm, carmine_value v);

carmine_value carmine_sym(carmine_vm *vm, const char *name);
/* A Symbol's name (NULL if v is not a Symbol); lives as long as the VM. */
const char *carmine_sym_name(carmine_vm *vm, carmine_value v, size_t *len);

carmine_value carmine_ary_new(carmine_vm *vm);
size_t carmine_ary_len(carmine_vm *vm, carmine_value ary);  /* 0 if not an Array */
carmine_value carmine_ary_get(carmine_vm *vm, carmine_value ary, int64_t i); /* nil if out */
carmine_status carmine_ary_set(carmine_vm *vm, carmine_value ary, int64_t i, carmine_value v);
carmine_status carmine_ary_push(carmine_vm *vm, carmine_value ary, carmine_value v);

carmine_value carmine_hash_new(carmine_vm *vm);
size_t carmine_hash_size(carmine_vm *vm, carmine_value hash); /* 0 if not a Hash */
/* hash[key] without defaults: CARMINE_UNDEF when the key is absent (no error pending). */
carmine_value carmine_hash_get(carmine_vm *vm, carmine_value hash, carmine_value key);
carmine_status carmine_hash_set(carmine_vm *vm, carmine_value hash, carmine_value key,
                                carmine_value v);
/* The keys, in insertion order, as a new Array. */
carmine_value carmine_hash_keys(carmine_vm *vm, carmine_value hash);

/* ---- calling Ruby ------------------------------------------------------------------- */

/* recv.method(*argv) (private methods too); CARMINE_UNDEF if it raised. */
carmine_value carmine_call(carmine_vm *vm, carmine_value recv, const char *method, int argc,
                           const carmine_value *argv);
/* The same with a block (a Proc, or nil for none). */
carmine_value carmine_call_with_block(carmine_vm *vm, carmine_value recv, const char *method,
                                      int argc, const carmine_value *argv, carmine_value block);
/* block.call(*argv) for the block a C method received. */
carmine_value carmine_yield(carmine_vm *vm, carmine_value block, int argc,
                            const carmine_value *argv);

/* ---- classes, modules, methods ------------------------------------------------------ */

/* A constant by path ("Apache::Request", "Integer"); CARMINE_UNDEF if not defined. */
carmine_value carmine_class_get(carmine_vm *vm, const char *path);
/* Defines (or reopens) a class under Object / under outer. superclass CARMINE_UNDEF or
 * nil means Object. CARMINE_UNDEF (TypeError pending) if the name is taken by a non-class
 * or the superclass differs. */
carmine_value carmine_define_class(carmine_vm *vm, const char *name, carmine_value superclass);
carmine_value carmine_define_class_under(carmine_vm *vm, carmine_value outer, const char *name,
                                         carmine_value superclass);
carmine_value carmine_define_module(carmine_vm *vm, const char *name);
carmine_value carmine_define_module_under(carmine_vm *vm, carmine_value outer, const char *name);

/* A method implemented in C. self is the receiver, argv[0..argc) the arguments (the
 * collector sees them), block the block given (nil if none), data the pointer given at
 * definition. Return the result, or CARMINE_UNDEF to raise the pending exception (after
 * carmine_raise, or after a carmine_call that returned CARMINE_UNDEF). */
typedef carmine_value (*carmine_func)(carmine_vm *vm, carmine_value self, int argc,
                                      const carmine_value *argv, carmine_value block, void *data);
/* Defines klass#name. Ruby checks argc against min_args..max_args (max_args -1: no
 * maximum; at most 255) and raises ArgumentError before calling f. */
carmine_status carmine_define_method(carmine_vm *vm, carmine_value klass, const char *name,
                                     carmine_func f, int min_args, int max_args, void *data);
/* Defines obj.name (a class method when obj is a class). */
carmine_status carmine_define_singleton_method(carmine_vm *vm, carmine_value obj,
                                               const char *name, carmine_func f, int min_args,
                                               int max_args, void *data);
/* Defines mod.name and the private instance method name (like module_function). */
carmine_status carmine_define_module_function(carmine_vm *vm, carmine_value mod,
                                              const char *name, carmine_func f, int min_args,
                                              int max_args, void *data);

/* klass.new(*argv); CARMINE_UNDEF if it raised. */
carmine_value carmine_new(carmine_vm *vm, carmine_value klass, int argc, const carmine_value *argv);

/* A C pointer wrapped in an instance of klass (a class made with carmine_define_class);
 * free_fn(ptr) (may be NULL) runs when the object is collected or the VM is closed. */
typedef void (*carmine_free_func)(void *ptr);
carmine_value carmine_data_new(carmine_vm *vm, carmine_value klass, void *ptr,
                               carmine_free_func free_fn);
/* The pointer of a data object; NULL if v is not one. */
void *carmine_data_ptr(carmine_vm *vm, carmine_value v);

/* Instance variables ("@name"), global variables ("$name") and constants. A global or
 * constant the host sets outside a run persists; one set inside a run is part of it. */
carmine_value carmine_iv_get(carmine_vm *vm, carmine_value obj, const char *name);
carmine_status carmine_iv_set(carmine_vm *vm, carmine_value obj, const char *name, carmine_value v);
carmine_value carmine_gv_get(carmine_vm *vm, const char *name);
carmine_status carmine_gv_set(carmine_vm *vm, const char *name, carmine_value v);
carmine_status carmine_const_set(carmine_vm *vm, carmine_value outer, const char *name,
                                 carmine_value v);

/* ---- garbage collection ------------------------------------------------------------- */

/* Keeps v alive while it is stored outside the using thread's stack (counted: register
 * twice, unregister twice). Registrations end with carmine_close. */
void carmine_gc_register(carmine_vm *vm, carmine_value v);
void carmine_gc_unregister(carmine_vm *vm, carmine_value v);
/* A full collection now. */
void carmine_gc_start(carmine_vm *vm);
/* A full collection now if at least `bytes` of new buffers (String, Array, Hash storage)
 * were allocated since the last collection. Returns that amount (so it collected when the
 * result is >= bytes; 0 for an invalid vm). For hosts between runs:
 * a request that allocates nothing costs a comparison, one that allocates is collected
 * after a bounded amount of garbage, without waiting for carmine_set_gc_malloc_limit's
 * trigger inside a later run. */
size_t carmine_gc_if_grown(carmine_vm *vm, size_t bytes);

#ifdef __cplusplus
}
#endif

#endif /* CARMINE_H */
