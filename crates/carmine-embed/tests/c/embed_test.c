/*
 * C tests of libcarmine (carmine.h), one group per command-line argument:
 *   embed_test values|arrays|hashes|methods|exceptions|limits|isolation|scripts|output|gc|threads|bytecode|tasks|lifecycle [N]
 * Each group exits 0 when every check holds; a failed check prints file:line and the
 * expression (and the VM's error report if any) and exits 1.
 * Driven by crates/carmine-embed/tests/c_api.rs (cargo test).
 */
#include <carmine.h>

#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

static carmine_vm *g_vm; /* the VM whose error report a failed check prints */

#define CHECK(cond)                                                                       \
    do {                                                                                  \
        if (!(cond)) {                                                                    \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);      \
            if (g_vm && carmine_error_report(g_vm))                                       \
                fprintf(stderr, "  last error: %s\n", carmine_error_report(g_vm));        \
            exit(1);                                                                      \
        }                                                                                 \
    } while (0)

static carmine_status eval(carmine_vm *vm, const char *src, carmine_value *out) {
    return carmine_eval(vm, src, strlen(src), "test.rb", out);
}

static carmine_status eval_shared(carmine_vm *vm, const char *src) {
    return carmine_eval_shared(vm, src, strlen(src), "shared.rb", NULL);
}

static int64_t to_i(carmine_vm *vm, carmine_value v) {
    int64_t i = 0;
    CHECK(carmine_to_int(vm, v, &i) == CARMINE_OK);
    return i;
}

static int str_is(carmine_vm *vm, carmine_value v, const char *expect) {
    size_t len = 0;
    const char *p = carmine_str_ptr(vm, v, &len);
    return p && len == strlen(expect) && memcmp(p, expect, len) == 0 && p[len] == '\0';
}

/* Evaluates src (isolated) and checks that it returns true. */
static void check_true(carmine_vm *vm, const char *src, int line) {
    carmine_value r = CARMINE_UNDEF;
    carmine_status st = eval(vm, src, &r);
    if (st != CARMINE_OK || r != carmine_true()) {
        fprintf(stderr, "%s:%d: not true (status %d): %s\n", __FILE__, line, st, src);
        if (carmine_error_report(vm)) fprintf(stderr, "  error: %s\n", carmine_error_report(vm));
        exit(1);
    }
}
#define CHECK_RUBY(vm, src) check_true(vm, src, __LINE__)

/* ---- suspendable runs (carmine_start / carmine_resume) ------------------------------- */

static carmine_script *compile(carmine_vm *vm, const char *src) {
    carmine_script *s = carmine_compile(vm, src, strlen(src), "task.rb");
    CHECK(s);
    return s;
}

/* Host.id: the number the host attached to the run being stepped (userdata). */
static carmine_value c_host_id(carmine_vm *vm, carmine_value self, int argc, const carmine_value *argv,
                               carmine_value block, void *data) {
    (void)self; (void)argc; (void)argv; (void)block; (void)data;
    return carmine_int(vm, (int64_t)(intptr_t)carmine_userdata(vm));
}

/* Host.each_yield { }: yields from C (a C frame under the block). */
static carmine_value c_host_yield(carmine_vm *vm, carmine_value self, int argc, const carmine_value *argv,
                                  carmine_value block, void *data) {
    (void)self; (void)argc; (void)argv; (void)data;
    return carmine_yield(vm, block, 0, NULL);
}

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* The waker of test_tasks: records the tasks it is told about. */
static carmine_task *woken[8];
static int nwoken;

static void record_wake(void *data, carmine_task *task) {
    CHECK(data == (void *)&woken);
    if (nwoken < 8)
        woken[nwoken++] = task;
}

/* Mutex, Queue and ConditionVariable waits suspend a run once a waker is set. */
static void test_task_waker(carmine_vm *vm) {
    carmine_value r;
    carmine_task *t, *u;
    carmine_wait w;
    carmine_set_waker(vm, record_wake, &woken);
    CHECK(eval_shared(vm, "Q = Queue.new; M = Mutex.new; CV = ConditionVariable.new; GO = [false]") == CARMINE_OK);
    carmine_script *pop = compile(vm, "Q.pop");

    /* Queue#pop: suspended with nothing to watch; a push in another run wakes it. */
    nwoken = 0;
    CHECK(carmine_start(vm, pop, &t, &w, &r) == CARMINE_SUSPENDED);
    CHECK(w.events == 0 && w.fd == -1 && w.timeout_ms == -1);
    carmine_task_set_data(t, (void *)&nwoken);
    CHECK(carmine_task_data(t) == (void *)&nwoken);
    /* Resumed before anything was pushed, it waits again. */
    CHECK(carmine_resume(vm, t, 0, &w, &r) == CARMINE_SUSPENDED && nwoken == 0);
    CHECK(eval(vm, "Q << 5", NULL) == CARMINE_OK);
    CHECK(nwoken == 1 && woken[0] == t && carmine_task_data(woken[0]) == (void *)&nwoken);
    CHECK(carmine_resume(vm, t, 0, &w, &r) == CARMINE_OK && to_i(vm, r) == 5);

    /* A timed pop suspends with its timeout and answers nil when resumed by it. */
    carmine_script *timed = compile(vm, "Q.pop(timeout: 0.05).inspect");
    CHECK(carmine_start(vm, timed, &t, &w, &r) == CARMINE_SUSPENDED && w.timeout_ms == 50);
    usleep(60 * 1000);
    CHECK(carmine_resume(vm, t, 0, &w, &r) == CARMINE_OK && str_is(vm, r, "nil"));

    /* Mutex#lock: u waits for the lock t holds while t sleeps; t's unlock wakes u. */
    carmine_script *holder = compile(vm, "M.lock; sleep 0.001; M.unlock; :held");
    carmine_script *locker = compile(vm, "M.synchronize { :locked }");
    nwoken = 0;
    CHECK(carmine_start(vm, holder, &t, &w, &r) == CARMINE_SUSPENDED && w.timeout_ms == 1);
    CHECK(carmine_start(vm, locker, &u, &w, &r) == CARMINE_SUSPENDED && w.timeout_ms == -1 && nwoken == 0);
    CHECK(carmine_resume(vm, t, 0, &w, &r) == CARMINE_OK && nwoken == 1 && woken[0] == u);
    CHECK(carmine_resume(vm, u, 0, &w, &r) == CARMINE_OK && carmine_type_of(vm, r) == CARMINE_T_SYMBOL);

    /* ConditionVariable#wait gives the Mutex up while the run is suspended. */
    carmine_script *waiter = compile(vm, "M.synchronize { CV.wait(M) until GO[0]; :signalled }");
    nwoken = 0;
    CHECK(carmine_start(vm, waiter, &t, &w, &r) == CARMINE_SUSPENDED);
    CHECK_RUBY(vm, "!M.locked?");
    CHECK(eval_shared(vm, "M.synchronize { GO[0] = true; CV.signal }") == CARMINE_OK);
    CHECK(nwoken == 1 && woken[0] == t);
    CHECK(carmine_resume(vm, t, 0, &w, &r) == CARMINE_OK && carmine_type_of(vm, r) == CARMINE_T_SYMBOL);

    /* A cancelled waiter is never named to the waker again. */
    nwoken = 0;
    CHECK(carmine_start(vm, pop, &t, &w, &r) == CARMINE_SUSPENDED);
    CHECK(carmine_cancel(vm, t) == CARMINE_OK);
    CHECK(eval(vm, "Q << 1; Q.pop", NULL) == CARMINE_OK && nwoken == 0);

    /* Without a waker those waits block again (here: a pop that finds an item). */
    carmine_set_waker(vm, NULL, NULL);
    CHECK(eval(vm, "Q << 2", NULL) == CARMINE_OK);
    CHECK(carmine_start(vm, pop, &t, &w, &r) == CARMINE_OK && to_i(vm, r) == 2);
}

/* carmine_set_notify's function of test_task_threads: writes the pipe it is given (on a
 * Ruby thread of the VM). */
static void notify_pipe(void *data) {
    char c = 1;
    CHECK(write(*(int *)data, &c, 1) == 1);
}

/* Resumes the n tasks as the waker names them (called by carmine_deliver_wakes after
 * notify_pipe: never on the thread that woke a task) until all have ended; out[i] gets
 * the value of tasks[i]. A task may be woken before its wait is over (any thread's end
 * wakes every task waiting in a join) and suspends again. */
static void join_tasks(carmine_vm *vm, int fd, carmine_task **tasks, carmine_value *out, int n) {
    int ended = 0;
    carmine_wait w;
    while (ended < n) {
        char c;
        CHECK(read(fd, &c, 1) == 1);
        CHECK(nwoken == 0);
        carmine_deliver_wakes(vm);
        for (int i = 0; i < nwoken; i++) {
            for (int k = 0; k < n; k++) {
                if (tasks[k] != woken[i])
                    continue;
                carmine_status st = carmine_resume(vm, tasks[k], 0, &w, &out[k]);
                CHECK(st == CARMINE_OK || st == CARMINE_SUSPENDED);
                if (st == CARMINE_OK) {
                    tasks[k] = NULL;
                    ended++;
                }
            }
        }
        nwoken = 0;
    }
}

/* With carmine_set_notify, Thread#join / #value suspend a run and its threads go on
 * while the host is outside the VM; each thread sees its own run's changes only. */
static void test_task_threads(carmine_vm *vm) {
    carmine_value r;
    carmine_task *t;
    carmine_wait w;
    int fds[2];
    CHECK(pipe(fds) == 0);
    carmine_set_waker(vm, record_wake, &woken);
    carmine_set_notify(vm, notify_pipe, &fds[1]);
    CHECK(eval_shared(vm, "TGO = [false, false, false]") == CARMINE_OK);

    carmine_script *joiner = compile(vm, "$g = 1; t = Thread.new { sleep 0.001 until TGO[0]; $g += 1; 42 }; \"#{t.value} #{$g}\"");
    nwoken = 0;
    CHECK(carmine_start(vm, joiner, &t, &w, &r) == CARMINE_SUSPENDED);
    CHECK(w.events == 0 && w.fd == -1 && w.timeout_ms == -1);
    /* Other runs meanwhile see none of its changes; one that starts a thread and ends
     * kills that thread only. */
    CHECK_RUBY(vm, "$g.nil?");
    CHECK_RUBY(vm, "Thread.new { sleep }; Thread.list.size == 3");
    CHECK(eval_shared(vm, "TGO[0] = true") == CARMINE_OK);
    join_tasks(vm, fds[0], &t, &r, 1);
    CHECK(str_is(vm, r, "42 2"));
    CHECK_RUBY(vm, "$g.nil? && Thread.list.size == 1");

    /* Two runs joining threads take turns: both end, each with its own globals. */
    carmine_script *a = compile(vm, "$h = 'a'; t = Thread.new { sleep 0.001 until TGO[1]; $h }; t.join; t.value");
    carmine_script *b = compile(vm, "$h = 'b'; Thread.new { sleep 0.001 until TGO[1]; $h }.value");
    carmine_task *ab[2];
    carmine_value rs[2];
    CHECK(carmine_start(vm, a, &ab[0], &w, &r) == CARMINE_SUSPENDED);
    CHECK(carmine_start(vm, b, &ab[1], &w, &r) == CARMINE_SUSPENDED);
    CHECK(eval_shared(vm, "TGO[1] = true") == CARMINE_OK);
    join_tasks(vm, fds[0], ab, rs, 2);
    CHECK(str_is(vm, rs[0], "a") && str_is(vm, rs[1], "b"));

    /* A run whose last thread ends while it is current hands the turn on: the host is
     * notified (no task to wake) and its next return makes the other run current, whose
     * thread then runs while both runs sleep. */
    carmine_script *sleeper = compile(vm, "Thread.new { sleep 0.05 }; sleep 10");
    carmine_script *setter = compile(vm, "Thread.new { TGO[2] = true }; sleep 10");
    carmine_task *s1, *s2;
    struct pollfd p = { .fd = fds[0], .events = POLLIN };
    char c;
    while (poll(&p, 1, 0) == 1) /* notifications of the runs above, delivered already */
        CHECK(read(fds[0], &c, 1) == 1);
    carmine_deliver_wakes(vm);
    nwoken = 0;
    CHECK(carmine_start(vm, sleeper, &s1, &w, &r) == CARMINE_SUSPENDED);
    CHECK(carmine_start(vm, setter, &s2, &w, &r) == CARMINE_SUSPENDED);
    CHECK(poll(&p, 1, 5000) == 1);
    CHECK(read(fds[0], &c, 1) == 1);
    CHECK(carmine_deliver_wakes(vm) == 1 && nwoken == 0);
    usleep(100 * 1000);
    CHECK_RUBY(vm, "TGO[2]");
    CHECK(carmine_cancel(vm, s1) == CARMINE_OK && carmine_cancel(vm, s2) == CARMINE_OK);

    /* A thread that computes forever while the host is outside: the host gets the VM back
     * (the thread hands the giant lock over at a safepoint), the run's timeout ends the
     * join, and the run's end kills the thread. */
    carmine_set_timeout(vm, 100);
    carmine_script *spin = compile(vm, "Thread.new { loop {} }.join");
    CHECK(carmine_start(vm, spin, &t, &w, &r) == CARMINE_SUSPENDED && w.timeout_ms > 0 && w.timeout_ms <= 100);
    usleep((useconds_t)(w.timeout_ms + 5) * 1000);
    CHECK(carmine_resume(vm, t, 0, &w, &r) == CARMINE_LIMIT);
    carmine_set_timeout(vm, 0);
    CHECK_RUBY(vm, "Thread.list.size == 1");

    carmine_set_notify(vm, NULL, NULL);
    carmine_set_waker(vm, NULL, NULL);
    close(fds[0]);
    close(fds[1]);
}

static void test_tasks(void) {
    carmine_vm *vm = g_vm = carmine_open();
    carmine_value r;
    carmine_task *t;
    carmine_wait w;
    carmine_value host = carmine_define_module(vm, "Host");
    carmine_define_module_function(vm, host, "id", c_host_id, 0, 0, NULL);
    carmine_define_module_function(vm, host, "each_yield", c_host_yield, 0, 0, NULL);

    /* A run that does not wait ends at once. */
    carmine_script *quick = compile(vm, "1 + 2");
    CHECK(carmine_start(vm, quick, &t, &w, &r) == CARMINE_OK && t == NULL && to_i(vm, r) == 3);

    /* sleep suspends with a timer; resuming ends the run with its value. */
    carmine_script *sleeper = compile(vm, "x = 20; sleep 0.05; x + 1");
    double t0 = now_ms();
    CHECK(carmine_start(vm, sleeper, &t, &w, &r) == CARMINE_SUSPENDED && t != NULL && r == CARMINE_UNDEF);
    CHECK(now_ms() - t0 < 40); /* it returned at once, not after the sleep */
    CHECK(w.events == 0 && w.fd == -1 && w.timeout_ms == 50);
    CHECK(carmine_task_count(vm) == 1);
    CHECK(carmine_resume(vm, t, 0, &w, &r) == CARMINE_OK && to_i(vm, r) == 21);
    CHECK(carmine_task_count(vm) == 0);
    /* A sleep without a duration has no timeout; sleeping twice suspends twice. */
    carmine_script *twice = compile(vm, "sleep; sleep 0.25; :done");
    CHECK(carmine_start(vm, twice, &t, &w, &r) == CARMINE_SUSPENDED && w.timeout_ms == -1);
    CHECK(carmine_resume(vm, t, 0, &w, &r) == CARMINE_SUSPENDED && w.timeout_ms == 250);
    CHECK(carmine_resume(vm, t, 0, &w, &r) == CARMINE_OK && carmine_type_of(vm, r) == CARMINE_T_SYMBOL);

    /* Reading a pipe with nothing in it suspends on its descriptor. */
    int fds[2];
    CHECK(pipe(fds) == 0);
    CHECK(carmine_gv_set(vm, "$rfd", carmine_int(vm, fds[0])) == CARMINE_OK);
    carmine_script *reader = compile(vm, "io = IO.for_fd($rfd, autoclose: false); io.readpartial(100).upcase");
    CHECK(carmine_start(vm, reader, &t, &w, &r) == CARMINE_SUSPENDED);
    CHECK(w.events == CARMINE_READABLE && w.fd == fds[0] && w.timeout_ms == -1);
    /* An early resume (nothing to read yet) suspends again on the same descriptor. */
    CHECK(carmine_resume(vm, t, CARMINE_READABLE, &w, &r) == CARMINE_SUSPENDED && w.fd == fds[0]);
    CHECK(write(fds[1], "hello", 5) == 5);
    CHECK(carmine_resume(vm, t, CARMINE_READABLE, &w, &r) == CARMINE_OK && str_is(vm, r, "HELLO"));
    /* IO#wait_readable with a timeout: resumed by its timeout, it answers nil. */
    carmine_script *waiter = compile(vm, "io = IO.for_fd($rfd, autoclose: false); io.wait_readable(0.03).inspect");
    CHECK(carmine_start(vm, waiter, &t, &w, &r) == CARMINE_SUSPENDED && w.events == CARMINE_READABLE && w.timeout_ms == 30);
    CHECK(carmine_resume(vm, t, 0, &w, &r) == CARMINE_OK && str_is(vm, r, "nil"));
    close(fds[0]);
    close(fds[1]);

    /* Many runs suspended at once in one VM, resumed in another order: each sees its own
     * globals, constants and methods and nobody else's, and nothing is left afterwards. */
    enum { N = 200 };
    carmine_script *iso = compile(vm,
        "i = Host.id\n"
        "seen = [defined?($mine), defined?(MINE), defined?(mine), $shared]\n"
        "$mine = i; MINE = i * 10; def mine = :m\n"
        "$shared << i\n"
        "sleep 0.001\n"
        "raise \"lost #{$mine}\" unless $mine == i && MINE == i * 10 && mine == :m\n"
        "sleep 0.001\n"
        "raise 'leaked' unless seen == [nil, nil, nil, $shared]\n"
        "i * 2\n");
    carmine_value shared = carmine_ary_new(vm);
    CHECK(carmine_gv_set(vm, "$shared", shared) == CARMINE_OK);
    carmine_task *tasks[N];
    for (intptr_t i = 0; i < N; i++) {
        carmine_set_userdata(vm, (void *)i);
        CHECK(carmine_start(vm, iso, &tasks[i], &w, &r) == CARMINE_SUSPENDED);
    }
    CHECK(carmine_task_count(vm) == N);
    CHECK(carmine_ary_len(vm, shared) == N); /* a shared object is shared */
    /* Between steps the VM is as the host left it. */
    CHECK_RUBY(vm, "defined?($mine).nil? && !defined?(MINE) && !respond_to?(:mine, true)");
    carmine_gc_start(vm);
    for (int i = N - 1; i >= 0; i--)
        CHECK(carmine_resume(vm, tasks[i], 0, &w, &r) == CARMINE_SUSPENDED);
    carmine_gc_start(vm);
    for (int i = 0; i < N; i++) {
        carmine_status st = carmine_resume(vm, tasks[i], 0, &w, &r);
        CHECK(st == CARMINE_OK && to_i(vm, r) == 2 * i);
    }
    CHECK(carmine_task_count(vm) == 0);
    CHECK_RUBY(vm, "defined?($mine).nil? && !defined?(MINE) && !respond_to?(:mine, true)");

    /* Errors end a task as they end a run. */
    carmine_script *fails = compile(vm, "sleep 0.001\nraise ArgumentError, 'late'");
    CHECK(carmine_start(vm, fails, &t, &w, &r) == CARMINE_SUSPENDED);
    CHECK(carmine_resume(vm, t, 0, &w, &r) == CARMINE_EXCEPTION && r == CARMINE_UNDEF);
    CHECK(!strcmp(carmine_error_class(vm), "ArgumentError") && !strcmp(carmine_error_message(vm), "late"));
    CHECK(carmine_error_backtrace_size(vm) >= 1 && strstr(carmine_error_backtrace(vm, 0), "task.rb:2"));
    /* Fiber.yield at the top of a run is an error, as on a main fiber. */
    carmine_script *yields = compile(vm, "Fiber.yield 1");
    CHECK(carmine_start(vm, yields, &t, &w, &r) == CARMINE_EXCEPTION && !strcmp(carmine_error_class(vm), "FiberError"));

    /* Where a run cannot suspend it waits by blocking: under a C method, with a thread of
     * its own alive, in a fiber it made. */
    carmine_script *blockers = compile(vm,
        "Host.each_yield { sleep 0.01 }\n"
        "t = Thread.new { 5 }; sleep 0.01; t.join\n"
        "Fiber.new { sleep 0.01; 7 }.resume\n");
    t0 = now_ms();
    CHECK(carmine_start(vm, blockers, &t, &w, &r) == CARMINE_OK && to_i(vm, r) == 7);
    CHECK(now_ms() - t0 >= 25);
    test_task_waker(vm);
    test_task_threads(vm);

    /* A run's own fibers work across its suspensions. */
    carmine_script *fibers = compile(vm, "f = Fiber.new { |x| y = Fiber.yield(x + 1); y * 2 }; a = f.resume(1); sleep 0.001; a + f.resume(10)");
    CHECK(carmine_start(vm, fibers, &t, &w, &r) == CARMINE_SUSPENDED);
    CHECK(carmine_resume(vm, t, 0, &w, &r) == CARMINE_OK && to_i(vm, r) == 22);

    /* The timeout counts suspended time: a run resumed after it ends with CARMINE_LIMIT. */
    carmine_set_timeout(vm, 100);
    carmine_script *forever = compile(vm, "sleep 10; :never");
    CHECK(carmine_start(vm, forever, &t, &w, &r) == CARMINE_SUSPENDED && w.timeout_ms > 0 && w.timeout_ms <= 100);
    usleep(120 * 1000);
    CHECK(carmine_resume(vm, t, 0, &w, &r) == CARMINE_LIMIT && !strcmp(carmine_error_class(vm), "Carmine::TimeoutError"));
    carmine_set_timeout(vm, 0);

    /* Cancelling runs the ensure clauses and undoes the run. */
    carmine_value log = carmine_ary_new(vm);
    CHECK(carmine_gv_set(vm, "$log", log) == CARMINE_OK);
    carmine_script *cancelled = compile(vm, "$mine = 1; begin; sleep 10; ensure; $log << \"ensure #{$mine}\"; end");
    CHECK(carmine_start(vm, cancelled, &t, &w, &r) == CARMINE_SUSPENDED);
    CHECK(carmine_start(vm, sleeper, &tasks[0], &w, &r) == CARMINE_SUSPENDED);
    CHECK(carmine_cancel(vm, t) == CARMINE_OK && carmine_task_count(vm) == 1);
    CHECK(carmine_ary_len(vm, log) == 1 && str_is(vm, carmine_ary_get(vm, log, 0), "ensure 1"));
    CHECK_RUBY(vm, "defined?($mine).nil?");
    CHECK(carmine_resume(vm, tasks[0], 0, &w, &r) == CARMINE_OK && to_i(vm, r) == 21);
    CHECK(carmine_resume(vm, t, 0, &w, &r) == CARMINE_INVALID); /* a freed handle */

    /* Closing a VM with runs still suspended frees them. */
    CHECK(carmine_start(vm, forever, &t, &w, &r) == CARMINE_SUSPENDED);
    CHECK(carmine_start(vm, twice, &t, &w, &r) == CARMINE_SUSPENDED);
    carmine_close(vm);
    g_vm = NULL;
}

/* ---- values ---------------------------------------------------------------------- */

static void test_values(void) {
    carmine_vm *vm = g_vm = carmine_open();
    CHECK(vm);
    carmine_value v;
    int64_t i;
    double d;

    CHECK(carmine_type_of(vm, carmine_nil()) == CARMINE_T_NIL);
    CHECK(carmine_type_of(vm, carmine_true()) == CARMINE_T_TRUE);
    CHECK(carmine_type_of(vm, carmine_false()) == CARMINE_T_FALSE);
    CHECK(carmine_type_of(vm, CARMINE_UNDEF) == CARMINE_T_UNDEF);
    CHECK(carmine_truthy(carmine_bool(1)) && !carmine_truthy(carmine_bool(0)));
    CHECK(!carmine_truthy(carmine_nil()) && !carmine_truthy(CARMINE_UNDEF));
    CHECK(carmine_is_nil(carmine_nil()) && !carmine_is_nil(carmine_false()));

    /* Integers, both ways, including values past the inline range. */
    int64_t ints[] = {0, 1, -1, 42, (int64_t)1 << 62, -((int64_t)1 << 62) - 1, INT64_MAX, INT64_MIN};
    for (size_t k = 0; k < sizeof ints / sizeof ints[0]; k++) {
        v = carmine_int(vm, ints[k]);
        CHECK(carmine_type_of(vm, v) == CARMINE_T_INTEGER);
        CHECK(carmine_to_int(vm, v, &i) == CARMINE_OK && i == ints[k]);
    }
    CHECK(eval(vm, "2**64", &v) == CARMINE_OK);
    CHECK(carmine_to_int(vm, v, &i) == CARMINE_EXCEPTION);
    CHECK(strcmp(carmine_error_class(vm), "RangeError") == 0);
    CHECK(carmine_to_int(vm, carmine_cstr(vm, "1"), &i) == CARMINE_EXCEPTION);
    CHECK(strcmp(carmine_error_class(vm), "TypeError") == 0);

    /* Floats. */
    double ds[] = {0.0, 1.5, -2.25, 1e300, 5e-324};
    for (size_t k = 0; k < sizeof ds / sizeof ds[0]; k++) {
        v = carmine_float(vm, ds[k]);
        CHECK(carmine_type_of(vm, v) == CARMINE_T_FLOAT);
        CHECK(carmine_to_float(vm, v, &d) == CARMINE_OK && d == ds[k]);
    }
    CHECK(carmine_to_float(vm, carmine_int(vm, 7), &d) == CARMINE_OK && d == 7.0);
    CHECK(eval(vm, "1.0 / 3", &v) == CARMINE_OK);
    CHECK(carmine_to_float(vm, v, &d) == CARMINE_OK && d > 0.333 && d < 0.334);

    /* Strings: bytes with a length (NUL inside is kept), NUL-terminated for C. */
    v = carmine_str(vm, "a\0b", 3);
    size_t len;
    const char *p = carmine_str_ptr(vm, v, &len);
    CHECK(p && len == 3 && p[0] == 'a' && p[1] == 0 && p[2] == 'b' && p[3] == 0);
    CHECK(carmine_type_of(vm, v) == CARMINE_T_STRING);
    char big[200];
    memset(big, 'x', sizeof big);
    v = carmine_str(vm, big, sizeof big);
    p = carmine_str_ptr(vm, v, &len);
    CHECK(p && len == sizeof big && p[len] == 0);
    v = carmine_cstr(vm, "héllo");
    CHECK(str_is(vm, v, "héllo"));
    CHECK(carmine_str_ptr(vm, carmine_int(vm, 1), &len) == NULL);
    CHECK(eval(vm, "'abc' * 20", &v) == CARMINE_OK && carmine_type_of(vm, v) == CARMINE_T_STRING);
    p = carmine_str_ptr(vm, v, &len);
    CHECK(len == 60 && strlen(p) == 60);
    v = carmine_to_s(vm, carmine_int(vm, -12));
    CHECK(str_is(vm, v, "-12"));
    v = carmine_inspect(vm, carmine_cstr(vm, "q\""));
    CHECK(str_is(vm, v, "\"q\\\"\""));

    /* Symbols. */
    v = carmine_sym(vm, "hello_world");
    CHECK(carmine_type_of(vm, v) == CARMINE_T_SYMBOL);
    CHECK(strcmp(carmine_sym_name(vm, v, &len), "hello_world") == 0 && len == 11);
    CHECK(eval(vm, ":hello_world", &v) == CARMINE_OK && v == carmine_sym(vm, "hello_world"));
    CHECK(carmine_sym_name(vm, carmine_nil(), NULL) == NULL);

    /* Values from C into Ruby and back through a method call. */
    carmine_value args[2] = {carmine_cstr(vm, "ab"), carmine_int(vm, 3)};
    v = carmine_call(vm, args[0], "*", 1, &args[1]);
    CHECK(str_is(vm, v, "ababab"));
    v = carmine_call(vm, carmine_int(vm, 10), "fdiv", 1, &args[1]);
    CHECK(carmine_to_float(vm, v, &d) == CARMINE_OK && d > 3.33 && d < 3.34);
    CHECK(carmine_call(vm, carmine_nil(), "no_such_method", 0, NULL) == CARMINE_UNDEF);
    CHECK(strcmp(carmine_error_class(vm), "NoMethodError") == 0);

    /* Globals and constants set by the host. */
    CHECK(carmine_gv_set(vm, "$answer", carmine_int(vm, 42)) == CARMINE_OK);
    CHECK(to_i(vm, carmine_gv_get(vm, "$answer")) == 42);
    CHECK(carmine_const_set(vm, carmine_class_get(vm, "Object"), "HOST_CONST", carmine_cstr(vm, "c")) == CARMINE_OK);
    CHECK_RUBY(vm, "$answer == 42 && HOST_CONST == 'c'");
    CHECK(carmine_class_get(vm, "NoSuchThing") == CARMINE_UNDEF);
    CHECK(strcmp(carmine_error_class(vm), "NameError") == 0);
    CHECK(carmine_type_of(vm, carmine_class_get(vm, "Comparable")) == CARMINE_T_MODULE);
    CHECK(carmine_type_of(vm, carmine_class_get(vm, "File::Stat")) == CARMINE_T_CLASS);

    carmine_close(vm);
    g_vm = NULL;
}

/* ---- arrays ---------------------------------------------------------------------- */

static void test_arrays(void) {
    carmine_vm *vm = g_vm = carmine_open();
    carmine_value a = carmine_ary_new(vm), r;
    CHECK(carmine_type_of(vm, a) == CARMINE_T_ARRAY && carmine_ary_len(vm, a) == 0);
    for (int k = 0; k < 100; k++) CHECK(carmine_ary_push(vm, a, carmine_int(vm, k * k)) == CARMINE_OK);
    CHECK(carmine_ary_push(vm, a, carmine_cstr(vm, "end")) == CARMINE_OK);
    CHECK(carmine_ary_len(vm, a) == 101);
    CHECK(to_i(vm, carmine_ary_get(vm, a, 7)) == 49);
    CHECK(str_is(vm, carmine_ary_get(vm, a, -1), "end"));
    CHECK(carmine_ary_get(vm, a, 1000) == carmine_nil());
    CHECK(carmine_ary_set(vm, a, 0, carmine_sym(vm, "first")) == CARMINE_OK);
    CHECK(carmine_ary_set(vm, a, 105, carmine_true()) == CARMINE_OK); /* pads with nil */
    CHECK(carmine_ary_len(vm, a) == 106 && carmine_ary_get(vm, a, 103) == carmine_nil());
    CHECK(carmine_ary_set(vm, a, -1000, carmine_true()) == CARMINE_EXCEPTION);
    CHECK(strcmp(carmine_error_class(vm), "IndexError") == 0);
    /* Into Ruby: a method receives the array. */
    carmine_value s = carmine_call(vm, a, "size", 0, NULL);
    CHECK(to_i(vm, s) == 106);
    /* From Ruby. */
    CHECK(eval(vm, "[1, 'two', :three, [4.0], {five: 5}, nil]", &r) == CARMINE_OK);
    CHECK(carmine_ary_len(vm, r) == 6);
    CHECK(to_i(vm, carmine_ary_get(vm, r, 0)) == 1);
    CHECK(str_is(vm, carmine_ary_get(vm, r, 1), "two"));
    CHECK(carmine_ary_get(vm, r, 2) == carmine_sym(vm, "three"));
    CHECK(carmine_type_of(vm, carmine_ary_get(vm, carmine_ary_get(vm, r, 3), 0)) == CARMINE_T_FLOAT);
    CHECK(carmine_type_of(vm, carmine_ary_get(vm, r, 4)) == CARMINE_T_HASH);
    CHECK(carmine_ary_get(vm, r, 5) == carmine_nil());
    /* A frozen array refuses changes with FrozenError. */
    CHECK(eval(vm, "[1].freeze", &r) == CARMINE_OK);
    CHECK(carmine_ary_push(vm, r, carmine_nil()) == CARMINE_EXCEPTION);
    CHECK(strcmp(carmine_error_class(vm), "FrozenError") == 0);
    CHECK(carmine_ary_len(vm, carmine_nil()) == 0 && carmine_ary_push(vm, carmine_nil(), carmine_nil()) == CARMINE_INVALID);
    carmine_close(vm);
    g_vm = NULL;
}

/* ---- hashes ---------------------------------------------------------------------- */

static void test_hashes(void) {
    carmine_vm *vm = g_vm = carmine_open();
    carmine_value h = carmine_hash_new(vm), r;
    CHECK(carmine_type_of(vm, h) == CARMINE_T_HASH && carmine_hash_size(vm, h) == 0);
    CHECK(carmine_hash_set(vm, h, carmine_cstr(vm, "name"), carmine_cstr(vm, "carmine")) == CARMINE_OK);
    CHECK(carmine_hash_set(vm, h, carmine_sym(vm, "n"), carmine_int(vm, 3)) == CARMINE_OK);
    CHECK(carmine_hash_set(vm, h, carmine_int(vm, 1), carmine_float(vm, 0.5)) == CARMINE_OK);
    CHECK(carmine_hash_size(vm, h) == 3);
    CHECK(str_is(vm, carmine_hash_get(vm, h, carmine_cstr(vm, "name")), "carmine")); /* String keys by value */
    CHECK(to_i(vm, carmine_hash_get(vm, h, carmine_sym(vm, "n"))) == 3);
    CHECK(carmine_hash_get(vm, h, carmine_cstr(vm, "missing")) == CARMINE_UNDEF);
    carmine_value keys = carmine_hash_keys(vm, h);
    CHECK(carmine_ary_len(vm, keys) == 3 && str_is(vm, carmine_ary_get(vm, keys, 0), "name"));
    /* Into Ruby and back. */
    carmine_value ins = carmine_inspect(vm, h);
    CHECK(str_is(vm, ins, "{\"name\" => \"carmine\", n: 3, 1 => 0.5}"));
    CHECK(eval(vm, "h = Hash.new(0); h['a'] = {'b' => [1, 2]}; h", &r) == CARMINE_OK);
    carmine_value inner = carmine_hash_get(vm, r, carmine_cstr(vm, "a"));
    CHECK(carmine_type_of(vm, inner) == CARMINE_T_HASH);
    CHECK(to_i(vm, carmine_ary_get(vm, carmine_hash_get(vm, inner, carmine_cstr(vm, "b")), 1)) == 2);
    CHECK(carmine_hash_get(vm, r, carmine_cstr(vm, "zz")) == CARMINE_UNDEF); /* no default */
    carmine_close(vm);
    g_vm = NULL;
}

/* ---- methods defined in C ---------------------------------------------------------- */

static int g_counter;

static carmine_value c_add(carmine_vm *vm, carmine_value self, int argc, const carmine_value *argv,
                           carmine_value block, void *data) {
    (void)self; (void)block;
    int64_t sum = *(int64_t *)data;
    for (int k = 0; k < argc; k++) {
        int64_t x;
        if (carmine_to_int(vm, argv[k], &x) != CARMINE_OK) return CARMINE_UNDEF; /* TypeError */
        sum += x;
    }
    return carmine_int(vm, sum);
}

static carmine_value c_each_twice(carmine_vm *vm, carmine_value self, int argc,
                                  const carmine_value *argv, carmine_value block, void *data) {
    (void)self; (void)argc; (void)data;
    if (carmine_is_nil(block)) return carmine_raise(vm, carmine_class_get(vm, "ArgumentError"), "no block given");
    carmine_value out = carmine_ary_new(vm);
    for (int k = 0; k < 2; k++) {
        carmine_value r = carmine_yield(vm, block, 1, argv);
        if (r == CARMINE_UNDEF) return CARMINE_UNDEF; /* the block raised, or broke out */
        carmine_ary_push(vm, out, r);
    }
    return out;
}

static carmine_value c_request_uri(carmine_vm *vm, carmine_value self, int argc,
                                   const carmine_value *argv, carmine_value block, void *data) {
    (void)self; (void)argc; (void)argv; (void)block; (void)data;
    const char *uri = carmine_userdata(vm);
    return carmine_cstr(vm, uri);
}

static carmine_value c_fail(carmine_vm *vm, carmine_value self, int argc, const carmine_value *argv,
                            carmine_value block, void *data) {
    (void)self; (void)argc; (void)argv; (void)block; (void)data;
    return carmine_raise(vm, carmine_class_get(vm, "IOError"), "failed in C");
}

static carmine_value c_call_ruby(carmine_vm *vm, carmine_value self, int argc,
                                 const carmine_value *argv, carmine_value block, void *data) {
    (void)block; (void)data; (void)argc;
    /* Calls back into Ruby; an exception there propagates by returning CARMINE_UNDEF. */
    return carmine_call(vm, self, "ruby_side", 1, argv);
}

static carmine_value c_count(carmine_vm *vm, carmine_value self, int argc, const carmine_value *argv,
                             carmine_value block, void *data) {
    (void)vm; (void)self; (void)argc; (void)argv; (void)block; (void)data;
    g_counter++;
    return carmine_nil();
}

static int g_freed;
static void free_point(void *p) {
    g_freed++;
    free(p);
}

struct point { int x, y; };

static carmine_value c_point_new(carmine_vm *vm, carmine_value klass, int argc,
                                 const carmine_value *argv, carmine_value block, void *data) {
    (void)argc; (void)block; (void)data;
    struct point *pt = malloc(sizeof *pt);
    pt->x = (int)to_i(vm, argv[0]);
    pt->y = (int)to_i(vm, argv[1]);
    return carmine_data_new(vm, klass, pt, free_point);
}

static carmine_value c_point_x(carmine_vm *vm, carmine_value self, int argc, const carmine_value *argv,
                               carmine_value block, void *data) {
    (void)argc; (void)argv; (void)block; (void)data;
    struct point *pt = carmine_data_ptr(vm, self);
    if (!pt) return carmine_raise(vm, carmine_class_get(vm, "TypeError"), "not a Point");
    return carmine_int(vm, pt->x);
}

static void test_methods(void) {
    carmine_vm *vm = g_vm = carmine_open();
    static int64_t base = 100;
    carmine_value r;

    carmine_value calc = carmine_define_class(vm, "Calc", CARMINE_UNDEF);
    CHECK(carmine_type_of(vm, calc) == CARMINE_T_CLASS);
    CHECK(carmine_define_class(vm, "Calc", carmine_nil()) == calc); /* reopening */
    CHECK(carmine_define_method(vm, calc, "add", c_add, 0, -1, &base) == CARMINE_OK);
    CHECK(carmine_define_method(vm, calc, "each_twice", c_each_twice, 1, 1, NULL) == CARMINE_OK);
    CHECK(carmine_define_method(vm, calc, "fail", c_fail, 0, 0, NULL) == CARMINE_OK);
    CHECK(carmine_define_method(vm, calc, "call_ruby", c_call_ruby, 1, 1, NULL) == CARMINE_OK);
    CHECK(carmine_define_method(vm, calc, "bad", c_add, 3, 1, NULL) == CARMINE_INVALID);
    CHECK(carmine_define_singleton_method(vm, calc, "count", c_count, 0, 0, NULL) == CARMINE_OK);

    carmine_value apache = carmine_define_module(vm, "Apache");
    CHECK(carmine_type_of(vm, apache) == CARMINE_T_MODULE);
    carmine_value req = carmine_define_class_under(vm, apache, "Request", CARMINE_UNDEF);
    CHECK(carmine_define_method(vm, req, "uri", c_request_uri, 0, 0, NULL) == CARMINE_OK);
    CHECK(carmine_define_module_function(vm, apache, "uri", c_request_uri, 0, 0, NULL) == CARMINE_OK);

    carmine_value point = carmine_define_class(vm, "Point", CARMINE_UNDEF);
    CHECK(carmine_define_singleton_method(vm, point, "make", c_point_new, 2, 2, NULL) == CARMINE_OK);
    CHECK(carmine_define_method(vm, point, "x", c_point_x, 0, 0, NULL) == CARMINE_OK);

    /* Calls from Ruby with receiver, argc/argv and data. */
    CHECK_RUBY(vm, "Calc.new.add == 100 && Calc.new.add(1, 2, 3) == 106");
    CHECK_RUBY(vm, "Calc.new.method(:add).call(1) == 101 && Calc.new.send(:add, 2) == 102");
    CHECK_RUBY(vm, "class Calc; alias plus add; end; Calc.new.plus(5) == 105");
    CHECK_RUBY(vm, "class Sub < Calc; def add(*a) = super(*a) * 2; end; Sub.new.add(1) == 202");
    /* Arity is checked by Ruby, before C runs. */
    CHECK_RUBY(vm, "begin; Calc.new.each_twice; false; rescue ArgumentError => e; "
                   "e.message == 'wrong number of arguments (given 0, expected 1)'; end");
    /* TypeError raised from C through carmine_to_int. */
    CHECK_RUBY(vm, "begin; Calc.new.add('x'); false; rescue TypeError; true; end");
    /* Blocks: yielded to from C; break out of the block through C. */
    CHECK_RUBY(vm, "Calc.new.each_twice(3) { |x| x * 2 } == [6, 6]");
    CHECK_RUBY(vm, "Calc.new.each_twice(3) { |x| break :out } == :out");
    CHECK_RUBY(vm, "begin; Calc.new.each_twice(1); false; rescue ArgumentError => e; e.message == 'no block given'; end");
    CHECK_RUBY(vm, "Calc.new.each_twice(2, &:to_s) == ['2', '2']");
    /* carmine_raise from C is a Ruby exception with a backtrace through the C method. */
    CHECK_RUBY(vm, "begin; Calc.new.fail; rescue IOError => e; e.message == 'failed in C' && "
                   "e.backtrace.any? { |l| l.include?('fail') }; end");
    /* An exception in Ruby code called by C propagates through C. */
    CHECK_RUBY(vm, "class Calc; def ruby_side(x) = raise(KeyError, x); end; "
                   "begin; Calc.new.call_ruby('k'); rescue KeyError => e; e.message == 'k'; end");
    CHECK_RUBY(vm, "class Calc; def ruby_side(x) = x + 1; end; Calc.new.call_ruby(1) == 2");
    /* Singleton and module functions; userdata. */
    g_counter = 0;
    CHECK_RUBY(vm, "3.times { Calc.count }; true");
    CHECK(g_counter == 3);
    carmine_set_userdata(vm, "/index.html");
    CHECK_RUBY(vm, "Apache::Request.new.uri == '/index.html' && Apache.uri == '/index.html'");
    carmine_set_userdata(vm, "/other");
    CHECK_RUBY(vm, "Apache::Request.new.uri == '/other'");
    CHECK_RUBY(vm, "module M; extend Apache; end; true");
    /* Data objects wrapping C pointers. */
    g_freed = 0;
    CHECK_RUBY(vm, "pt = Point.make(3, 4); pt.x == 3");
    CHECK_RUBY(vm, "begin; Point.new.x; false; rescue TypeError; true; end");
    CHECK(eval(vm, "Point.make(7, 8)", &r) == CARMINE_OK);
    CHECK(carmine_type_of(vm, r) == CARMINE_T_DATA && ((struct point *)carmine_data_ptr(vm, r))->y == 8);
    CHECK(carmine_data_ptr(vm, carmine_nil()) == NULL);
    /* Calls from C with a block made in Ruby. */
    carmine_value blk;
    CHECK(eval(vm, "proc { |x| x * 10 }", &blk) == CARMINE_OK);
    carmine_value list;
    CHECK(eval(vm, "[1, 2, 3]", &list) == CARMINE_OK);
    r = carmine_call_with_block(vm, list, "map", 0, NULL, blk);
    CHECK(carmine_ary_len(vm, r) == 3 && to_i(vm, carmine_ary_get(vm, r, 2)) == 30);
    carmine_value one = carmine_int(vm, 1);
    CHECK(to_i(vm, carmine_yield(vm, blk, 1, &one)) == 10);
    CHECK(carmine_yield(vm, carmine_nil(), 0, NULL) == CARMINE_UNDEF);
    /* carmine_new and instance variables. */
    carmine_value obj = carmine_new(vm, carmine_class_get(vm, "Object"), 0, NULL);
    CHECK(carmine_iv_set(vm, obj, "@name", carmine_cstr(vm, "n")) == CARMINE_OK);
    CHECK(str_is(vm, carmine_iv_get(vm, obj, "@name"), "n"));
    CHECK(carmine_iv_get(vm, obj, "@none") == carmine_nil());
    /* A run may not start inside a C method of the same VM. */
    carmine_close(vm);
    CHECK(g_freed == 2);
    g_vm = NULL;
}

/* ---- exceptions as data ------------------------------------------------------------- */

static void test_exceptions(void) {
    carmine_vm *vm = g_vm = carmine_open();
    carmine_value r;
    const char *src =
        "class AppError < StandardError; end\n"
        "def inner(x)\n"
        "  raise AppError, \"bad #{x}\"\n"
        "end\n"
        "def outer = inner(42)\n"
        "outer\n";
    CHECK(carmine_eval(vm, src, strlen(src), "app.rb", &r) == CARMINE_EXCEPTION);
    CHECK(r == CARMINE_UNDEF);
    CHECK(strcmp(carmine_error_class(vm), "AppError") == 0);
    CHECK(strcmp(carmine_error_message(vm), "bad 42") == 0);
    CHECK(carmine_error_backtrace_size(vm) == 3);
    CHECK(strcmp(carmine_error_backtrace(vm, 0), "app.rb:3:in 'Object#inner'") == 0);
    CHECK(strcmp(carmine_error_backtrace(vm, 1), "app.rb:5:in 'Object#outer'") == 0);
    CHECK(strcmp(carmine_error_backtrace(vm, 2), "app.rb:6:in '<main>'") == 0);
    CHECK(carmine_error_backtrace(vm, 3) == NULL);
    CHECK(strstr(carmine_error_report(vm), "app.rb:3:in 'Object#inner': bad 42 (AppError)") != NULL);
    carmine_value exc = carmine_error_value(vm);
    CHECK(carmine_type_of(vm, exc) == CARMINE_T_OBJECT);
    carmine_gc_start(vm); /* the exception stays alive while it is the error */
    CHECK(str_is(vm, carmine_call(vm, exc, "message", 0, NULL), "bad 42"));

    /* A syntax error is reported by compile. */
    carmine_script *s = carmine_compile(vm, "def (", 5, "broken.rb");
    CHECK(s == NULL);
    CHECK(strcmp(carmine_error_class(vm), "SyntaxError") == 0);
    CHECK(strstr(carmine_error_message(vm), "broken.rb") != NULL);
    CHECK(carmine_compile_file(vm, "/nonexistent/file.rb") == NULL);
    CHECK(strcmp(carmine_error_class(vm), "Errno::ENOENT") == 0);

    /* exit, exit!, abort: never the process's exit. */
    CHECK(eval(vm, "exit 3", &r) == CARMINE_EXIT && carmine_exit_status(vm) == 3);
    CHECK(eval(vm, "exit!(4)", &r) == CARMINE_EXIT && carmine_exit_status(vm) == 4);
    CHECK(eval(vm, "$stderr = Object.new.tap { def _1.write(*) = 0 }; abort 'gone'", &r) == CARMINE_EXIT);
    CHECK(carmine_exit_status(vm) == 1 && strcmp(carmine_error_message(vm), "gone") == 0);
    /* throw without catch, break at top level, a custom message method. */
    CHECK(eval(vm, "throw :nowhere", &r) == CARMINE_EXCEPTION);
    CHECK(strcmp(carmine_error_class(vm), "UncaughtThrowError") == 0);
    CHECK(eval(vm, "class E2 < StandardError; def message = 'custom'; end; raise E2", &r) == CARMINE_EXCEPTION);
    CHECK(strcmp(carmine_error_message(vm), "custom") == 0);
    /* Deep recursion is a SystemStackError, not a crash. */
    CHECK(eval(vm, "def f(n) = f(n + 1); f(0)", &r) == CARMINE_EXCEPTION);
    CHECK(strcmp(carmine_error_class(vm), "SystemStackError") == 0);
    /* Success clears the error. */
    CHECK(eval(vm, "1", &r) == CARMINE_OK && carmine_error_class(vm) == NULL && carmine_error_backtrace_size(vm) == 0);
    CHECK(carmine_error_value(vm) == carmine_nil());
    /* Invalid handles and arguments. */
    CHECK(carmine_eval(NULL, "1", 1, NULL, &r) == CARMINE_INVALID);
    CHECK(carmine_run(vm, NULL, &r) == CARMINE_INVALID);
    CHECK(carmine_eval(vm, NULL, 3, NULL, &r) == CARMINE_INVALID);
    carmine_close(vm);
    carmine_close(NULL);
    g_vm = NULL;
}

/* ---- limits ---------------------------------------------------------------------- */

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void test_limits(void) {
    carmine_vm *vm = g_vm = carmine_open();
    carmine_value r;
    carmine_set_timeout(vm, 200);
    /* A busy loop, one that rescues everything and retries, and a sleep all end. */
    const char *runaway[] = {
        "loop { }",
        "x = 0; while true; x += 1; end",
        "begin; loop { }; rescue Exception; retry; end",
        "def f = f2; def f2 = loop { [1].map { |x| x } }; f",
        "sleep 30",
        "begin; sleep 30; ensure; loop { }; end",
    };
    for (size_t k = 0; k < sizeof runaway / sizeof runaway[0]; k++) {
        double t0 = now_s();
        CHECK(eval(vm, runaway[k], &r) == CARMINE_LIMIT);
        CHECK(strcmp(carmine_error_class(vm), "Carmine::TimeoutError") == 0);
        CHECK(strstr(carmine_error_message(vm), "200 ms") != NULL);
        CHECK(now_s() - t0 < 25.0); /* ended by the limit, not by finishing */
    }
    /* The VM is usable afterwards, and a quick script is untouched. */
    CHECK(eval(vm, "(1..1000).sum", &r) == CARMINE_OK && to_i(vm, r) == 500500);
    /* A bare rescue does not catch the timeout. */
    CHECK(eval(vm, "begin; loop {}; rescue => e; :caught; end", &r) == CARMINE_LIMIT);
    carmine_set_timeout(vm, 0);
    CHECK(eval(vm, "sleep 0.3; :slept", &r) == CARMINE_OK && r == carmine_sym(vm, "slept"));

    /* The memory cap. */
    size_t base = carmine_memory_usage(vm);
    CHECK(base > 0);
    carmine_set_memory_limit(vm, base + (32u << 20));
    CHECK(eval(vm, "a = []; loop { a << ('x' * 100_000) }", &r) == CARMINE_LIMIT);
    CHECK(strcmp(carmine_error_class(vm), "NoMemoryError") == 0);
    CHECK(eval(vm, "a = []; 1_000_000_000.times { a << [1, 2, 3] }", &r) == CARMINE_LIMIT);
    CHECK(strcmp(carmine_error_class(vm), "NoMemoryError") == 0);
    CHECK(eval(vm, "begin; s = +''; loop { s << 'y' * 65536 }; rescue NoMemoryError; loop { s << 'z' * 65536 }; end", &r) == CARMINE_LIMIT);
    /* Within the cap, the same VM runs normally; memory went back. */
    carmine_gc_start(vm);
    CHECK(carmine_memory_usage(vm) < base + (32u << 20));
    CHECK(eval(vm, "Array.new(1000) { |i| i.to_s }.size", &r) == CARMINE_OK && to_i(vm, r) == 1000);
    carmine_set_memory_limit(vm, 0);
    /* Both limits on calls from the host too. */
    carmine_set_timeout(vm, 100);
    carmine_value prc;
    CHECK(eval(vm, "proc { loop { } }", &prc) == CARMINE_OK);
    CHECK(carmine_call(vm, prc, "call", 0, NULL) == CARMINE_UNDEF);
    CHECK(strcmp(carmine_error_class(vm), "Carmine::TimeoutError") == 0);
    carmine_close(vm);
    g_vm = NULL;
}

/* ---- isolation ------------------------------------------------------------------- */

static void test_isolation(void) {
    carmine_vm *vm = g_vm = carmine_open();
    carmine_value r;
    /* What the host shares: a global, a constant, a class from a shared setup script. */
    CHECK(carmine_gv_set(vm, "$shared", carmine_cstr(vm, "host")) == CARMINE_OK);
    const char *setup = "class Helper; def self.greet = 'hi'; end; SETUP = [1, 2]; $setup_done = true";
    CHECK(carmine_eval_shared(vm, setup, strlen(setup), "setup.rb", &r) == CARMINE_OK);

    const char *first =
        "$leak = 1; $shared = 'changed'; $, = '-'\n"
        "LEAK = 2; SETUP << 3\n"
        "def leaked_method = 3\n"
        "@main_ivar = 4\n"
        "class LeakClass; end\n"
        "class String; def shout = upcase + '!'; end\n"
        "class Helper; def self.greet = 'hacked'; def extra = 1; end\n"
        "module Kernel; def kernel_leak = 5; end\n"
        "class Integer; def +(o) = 42; end\n"
        "Object.send(:remove_const, :SETUP) rescue nil\n"
        "include Comparable\n"
        "require 'set'\n"
        "Struct.new('Leak', :a)\n"
        "at_exit { $at_exit_ran = true }\n"
        "Thread.new { sleep }\n"
        "begin; raise 'x'; rescue; end\n"
        ":first";
    carmine_script *s1 = carmine_compile(vm, first, strlen(first), "first.rb");
    CHECK(s1);
    CHECK(carmine_run(vm, s1, &r) == CARMINE_OK && r == carmine_sym(vm, "first"));

    const char *second =
        "[defined?($leak).nil?, $shared == 'host', $,.nil?,\n"
        " !defined?(LEAK), SETUP == [1, 2, 3],\n"
        " !respond_to?(:leaked_method, true), !instance_variable_defined?(:@main_ivar),\n"
        " !defined?(LeakClass), !''.respond_to?(:shout),\n"
        " Helper.greet == 'hi', !Helper.method_defined?(:extra),\n"
        " !respond_to?(:kernel_leak, true), 1 + 1 == 2,\n"
        " !Object.include?(Comparable), !Struct.const_defined?(:Leak),\n"
        " $at_exit_ran.nil?, Thread.list.size == 1, $!.nil?, $setup_done == true]";
    CHECK(carmine_eval(vm, second, strlen(second), "second.rb", &r) == CARMINE_OK);
    for (size_t k = 0; k < carmine_ary_len(vm, r); k++) {
        if (carmine_ary_get(vm, r, (int64_t)k) != carmine_true()) {
            fprintf(stderr, "isolation check %zu failed\n", k);
            exit(1);
        }
    }
    /* The run's at_exit block ran at the end of its run. */
    CHECK(carmine_run(vm, s1, &r) == CARMINE_OK);
    CHECK_RUBY(vm, "$at_exit_ran.nil?");
    /* require in a run loads again in the next (its constants were removed). */
    CHECK_RUBY(vm, "require 'set'; Set.new([1]).size == 1");
    CHECK_RUBY(vm, "defined?(Set) ? Set.new([1,1]).size == 1 : true");
    /* A failed run is undone as well. */
    CHECK(eval(vm, "$failed = 1; FAILED = 2; raise 'boom'", &r) == CARMINE_EXCEPTION);
    CHECK_RUBY(vm, "$failed.nil? && !defined?(FAILED) && $!.nil?");
    /* Runs start from the state the host leaves between them (the snapshot a run starts
     * from is reused only while nothing else changed the VM): a host change is seen, and
     * what a run changes is undone back to it. */
    CHECK(carmine_gv_set(vm, "$shared", carmine_cstr(vm, "host2")) == CARMINE_OK);
    CHECK_RUBY(vm, "$shared == 'host2' && ($shared = 'run'; $new_global = 1; true)");
    CHECK_RUBY(vm, "$shared == 'host2' && !defined?($new_global)");
    const char *host_change = "$LOAD_PATH << '/host/lib'; @host_ivar = 1";
    CHECK(carmine_eval_shared(vm, host_change, strlen(host_change), "host.rb", &r) == CARMINE_OK);
    CHECK_RUBY(vm, "$LOAD_PATH.last == '/host/lib' && @host_ivar == 1 && ($LOAD_PATH << '/run/lib'; @host_ivar = 2; @run_ivar = 3; true)");
    CHECK_RUBY(vm, "$LOAD_PATH.last == '/host/lib' && @host_ivar == 1 && !instance_variable_defined?(:@run_ivar)");
    /* The snapshot a run starts from is reused while runs leave the VM as it was: after
     * many runs that change nothing, a run that does change it is still undone, whether
     * it runs to the end (carmine_run) or as a task (carmine_start). */
    const char *quiet = "1 + 1";
    const char *late =
        "$late = 1; LATE = 2; @late = 3; $LOAD_PATH << '/late'; $LOADED_FEATURES << 'late.rb'\n"
        "at_exit { $late_exit = 1 }; def late_m = 4; :late";
    const char *after_late =
        "!defined?($late) && !defined?(LATE) && !instance_variable_defined?(:@late) &&\n"
        "!$LOAD_PATH.include?('/late') && !$LOADED_FEATURES.include?('late.rb') &&\n"
        "$late_exit.nil? && !respond_to?(:late_m, true) && @host_ivar == 1";
    carmine_script *sq = carmine_compile(vm, quiet, strlen(quiet), "quiet.rb");
    carmine_script *sl = carmine_compile(vm, late, strlen(late), "late.rb");
    carmine_script *sa = carmine_compile(vm, after_late, strlen(after_late), "after.rb");
    CHECK(sq && sl && sa);
    for (int round = 0; round < 2; round++) {
        for (int k = 0; k < 50; k++) {
            carmine_task *t;
            carmine_wait w;
            CHECK((round ? carmine_start(vm, sq, &t, &w, &r) : carmine_run(vm, sq, &r)) == CARMINE_OK);
            CHECK(to_i(vm, r) == 2);
        }
        carmine_task *t;
        carmine_wait w;
        CHECK((round ? carmine_start(vm, sl, &t, &w, &r) : carmine_run(vm, sl, &r)) == CARMINE_OK);
        CHECK(r == carmine_sym(vm, "late"));
        CHECK((round ? carmine_start(vm, sa, &t, &w, &r) : carmine_run(vm, sa, &r)) == CARMINE_OK);
        CHECK(r == carmine_true());
    }
    /* A run that follows another with no call in between starts from that run's snapshot
     * without comparing the VM with it. Any call between two runs makes the next run
     * compare: changes made through the API that move no epoch (main's instance
     * variables, the load path's contents) are seen by the next run and kept after it,
     * whether it runs to the end or as a task. */
    carmine_value main_obj;
    CHECK(eval(vm, "self", &main_obj) == CARMINE_OK);
    const char *sees_api =
        "r = [@via_api, $LOAD_PATH.last]; @via_api = :run; @run_only = 1; $LOAD_PATH << '/run2'; r";
    const char *kept_api =
        "@via_api == round && $LOAD_PATH.last == \"/api#{round}\" && !instance_variable_defined?(:@run_only)";
    carmine_script *ss = carmine_compile(vm, sees_api, strlen(sees_api), "sees.rb");
    CHECK(ss);
    for (int round = 0; round < 2; round++) {
        carmine_task *t;
        carmine_wait w;
        for (int k = 0; k < 3; k++)
            CHECK((round ? carmine_start(vm, sq, &t, &w, &r) : carmine_run(vm, sq, &r)) == CARMINE_OK);
        CHECK(carmine_iv_set(vm, main_obj, "@via_api", carmine_int(vm, round)) == CARMINE_OK);
        char dir[16];
        snprintf(dir, sizeof dir, "/api%d", round);
        CHECK(carmine_ary_push(vm, carmine_gv_get(vm, "$LOAD_PATH"), carmine_cstr(vm, dir)) == CARMINE_OK);
        CHECK((round ? carmine_start(vm, ss, &t, &w, &r) : carmine_run(vm, ss, &r)) == CARMINE_OK);
        CHECK(to_i(vm, carmine_ary_get(vm, r, 0)) == round);
        char check[200];
        snprintf(check, sizeof check, "round = %d; %s", round, kept_api);
        CHECK_RUBY(vm, check);
    }
    /* An error's data is made by calling its methods after the run was undone: what they
     * change stays, as a host change would (the next run compares the VM again). */
    const char *raises =
        "class MessageError < StandardError\n"
        "  def message = (TOPLEVEL_BINDING.receiver.instance_variable_set(:@from_message, 1); 'm')\n"
        "end\n"
        "raise MessageError";
    carmine_script *sr = carmine_compile(vm, raises, strlen(raises), "raises.rb");
    CHECK(sr);
    CHECK(carmine_run(vm, sq, &r) == CARMINE_OK);
    CHECK(carmine_run(vm, sr, &r) == CARMINE_EXCEPTION);
    CHECK(carmine_run(vm, sq, &r) == CARMINE_OK);
    CHECK_RUBY(vm, "@from_message == 1 && !defined?(MessageError)");
    carmine_script_free(vm, sr);
    carmine_script_free(vm, ss);
    carmine_script_free(vm, sq);
    carmine_script_free(vm, sl);
    carmine_script_free(vm, sa);
    carmine_script_free(vm, s1);
    carmine_close(vm);
    g_vm = NULL;
}

/* ---- scripts: compile once, run many times ----------------------------------------- */

static void test_scripts(void) {
    carmine_vm *vm = g_vm = carmine_open();
    carmine_value r;
    carmine_define_class(vm, "Counter", CARMINE_UNDEF);
    const char *src = "s = +''; 100.times { |i| s << i.to_s }; [s.size, $runs = ($runs || 0) + 1]";
    carmine_script *s = carmine_compile(vm, src, strlen(src), "req.rb");
    CHECK(s);
    for (int k = 0; k < 2000; k++) {
        CHECK(carmine_run(vm, s, &r) == CARMINE_OK);
        CHECK(to_i(vm, carmine_ary_get(vm, r, 0)) == 190);
        CHECK(to_i(vm, carmine_ary_get(vm, r, 1)) == 1); /* $runs never carries over */
    }
    /* A script handle survives collections and the runs of other code. */
    carmine_gc_start(vm);
    CHECK(eval(vm, "GC.start; 1", &r) == CARMINE_OK);
    CHECK(carmine_run(vm, s, &r) == CARMINE_OK);
    /* A freed handle is refused, the one run last too, and so is another VM's. */
    carmine_script *gone = carmine_compile(vm, "1", 1, "gone.rb");
    CHECK(gone && carmine_run(vm, gone, &r) == CARMINE_OK && carmine_run(vm, gone, &r) == CARMINE_OK);
    carmine_script_free(vm, gone);
    CHECK(carmine_run(vm, gone, &r) == CARMINE_INVALID);
    carmine_vm *other = carmine_open();
    carmine_script *foreign = carmine_compile(other, "2", 1, "foreign.rb");
    CHECK(foreign && carmine_run(vm, foreign, &r) == CARMINE_INVALID);
    CHECK(carmine_run(other, foreign, &r) == CARMINE_OK && to_i(other, r) == 2);
    carmine_close(other);
    /* run_shared keeps what the script defines. */
    carmine_script *def = carmine_compile(vm, "$kept = 7; KEPT = 8", 19, "def.rb");
    CHECK(carmine_run_shared(vm, def, &r) == CARMINE_OK);
    CHECK_RUBY(vm, "$kept == 7 && KEPT == 8");
    carmine_script_free(vm, def);
    /* Memory stays flat over many isolated evals (the code of each is freed). */
    carmine_gc_start(vm);
    size_t before = 0, after;
    for (int k = 0; k < 9000; k++) {
        char buf[200];
        snprintf(buf, sizeof buf, "def m%d = %d; X%d = 'v' * 100; $g%d = m%d; class C%d; end", k % 50, k, k % 50, k % 50, k % 50, k % 50);
        CHECK(eval(vm, buf, &r) == CARMINE_OK);
        if (k == 2999) {
            carmine_gc_start(vm);
            before = carmine_memory_usage(vm);
        }
    }
    carmine_gc_start(vm);
    after = carmine_memory_usage(vm);
    printf("memory after 3000 evals: %zu bytes, after 9000: %zu bytes\n", before, after);
    CHECK(after <= before + before / 10);
    carmine_script_free(vm, s);
    carmine_close(vm); /* also frees scripts the host did not free */
    g_vm = NULL;
}

/* ---- output ---------------------------------------------------------------------- */

struct buf { char data[4096]; size_t len; };

static void buf_write(void *data, const char *bytes, size_t len) {
    struct buf *b = data;
    if (b->len + len < sizeof b->data) {
        memcpy(b->data + b->len, bytes, len);
        b->len += len;
        b->data[b->len] = 0;
    }
}

static void test_output(void) {
    carmine_vm *vm = g_vm = carmine_open();
    static struct buf out, err;
    carmine_value r;
    carmine_set_stdout(vm, buf_write, &out);
    carmine_set_stderr(vm, buf_write, &err);
    CHECK(eval(vm, "puts 'a', [1, [2]]; print 'b', 'c'; p :d; $stdout.write('e'); $stdout << 'f'; printf('%03d', 7); "
                   "warn 'w'; $stderr.puts 'x'",
               &r) == CARMINE_OK);
    CHECK(strcmp(out.data, "a\n1\n2\nbc:d\nef007") == 0);
    CHECK(strcmp(err.data, "w\nx\n") == 0);
    /* The sinks persist across runs (set by the host). */
    out.len = 0;
    CHECK(eval(vm, "puts 'again'", &r) == CARMINE_OK);
    CHECK(strcmp(out.data, "again\n") == 0);
    /* A run that replaces $stdout does not affect the next. */
    CHECK(eval(vm, "$stdout = $stderr; 1", &r) == CARMINE_OK);
    out.len = 0;
    CHECK(eval(vm, "print 'back'", &r) == CARMINE_OK);
    CHECK(strcmp(out.data, "back") == 0);
    carmine_set_stdout(vm, NULL, NULL);
    carmine_close(vm);
    g_vm = NULL;
}

/* ---- GC rules: values kept in the host's heap ------------------------------------- */

struct holder { carmine_value v; };

static void test_gc(void) {
    carmine_vm *vm = g_vm = carmine_open();
    carmine_value r;
    /* carmine_set_gc_after_run: a run that leaves 2 MB of new buffers ends with a
     * collection; runs that allocate little do not. */
    carmine_set_gc_after_run(vm, 512 * 1024);
    CHECK(eval(vm, "GC.count", &r) == CARMINE_OK);
    int64_t before = to_i(vm, r);
    CHECK(eval(vm, "GC.count", &r) == CARMINE_OK);
    CHECK(to_i(vm, r) == before);
    CHECK(eval(vm, "'x' * 2_000_000; nil", &r) == CARMINE_OK);
    CHECK(eval(vm, "GC.count", &r) == CARMINE_OK);
    CHECK(to_i(vm, r) == before + 1);
    carmine_set_gc_after_run(vm, 0);
    CHECK(eval(vm, "'x' * 2_000_000; nil", &r) == CARMINE_OK);
    CHECK(eval(vm, "GC.count", &r) == CARMINE_OK);
    CHECK(to_i(vm, r) == before + 1);
    struct holder *h = malloc(sizeof *h);
    h->v = carmine_cstr(vm, "kept in C heap");
    carmine_gc_register(vm, h->v);
    carmine_value arr = carmine_ary_new(vm); /* on the C stack: found by the collector */
    for (int k = 0; k < 1000; k++) carmine_ary_push(vm, arr, carmine_str(vm, "element", 7));
    for (int k = 0; k < 20; k++) {
        CHECK(eval(vm, "a = []; 20_000.times { |i| a << i.to_s }; GC.start; a.size", &r) == CARMINE_OK);
        carmine_gc_start(vm);
    }
    CHECK(str_is(vm, h->v, "kept in C heap"));
    CHECK(carmine_ary_len(vm, arr) == 1000 && str_is(vm, carmine_ary_get(vm, arr, 999), "element"));
    carmine_gc_unregister(vm, h->v);
    free(h);
    /* Registered data objects are freed once unregistered and unreachable. */
    carmine_value point = carmine_define_class(vm, "Point", CARMINE_UNDEF);
    g_freed = 0;
    struct holder *ph = malloc(sizeof *ph);
    ph->v = carmine_data_new(vm, point, malloc(16), free_point);
    carmine_gc_register(vm, ph->v);
    carmine_gc_start(vm);
    CHECK(g_freed == 0);
    carmine_gc_unregister(vm, ph->v);
    ph->v = 0;
    free(ph);
    /* Conservative stack scanning may still see a stale copy; churn the stack and collect. */
    for (int k = 0; k < 5 && g_freed == 0; k++) {
        CHECK(eval(vm, "100.times { [1] }", &r) == CARMINE_OK);
        carmine_gc_start(vm);
    }
    carmine_close(vm);
    CHECK(g_freed == 1); /* by a collection, or at the latest by close */
    g_vm = NULL;
}

/* ---- threads: many VMs at once ------------------------------------------------------ */

struct job { int id; int ok; long result; };

static carmine_value c_tid(carmine_vm *vm, carmine_value self, int argc, const carmine_value *argv,
                           carmine_value block, void *data) {
    (void)self; (void)argc; (void)argv; (void)block;
    struct job *j = data;
    return carmine_int(vm, j->id);
}

static void *run_job(void *arg) {
    struct job *j = arg;
    carmine_vm *vm = carmine_open();
    if (!vm) return NULL;
    carmine_value k = carmine_define_class(vm, "Job", CARMINE_UNDEF);
    carmine_define_singleton_method(vm, k, "id", c_tid, 0, 0, j);
    const char *src =
        "def fib(n) = n < 2 ? n : fib(n - 1) + fib(n - 2)\n"
        "$id = Job.id; s = +''; 2000.times { |i| s << i.to_s }\n"
        "h = {}; 500.times { |i| h[\"k#{i}\"] = [i] * 3 }\n"
        "fib(20) + Job.id + h.size + (s.size > 0 ? 0 : 1)";
    carmine_script *s = carmine_compile(vm, src, strlen(src), "job.rb");
    j->ok = s != NULL;
    for (int n = 0; n < 20 && j->ok; n++) {
        carmine_value r;
        int64_t i = 0;
        if (carmine_run(vm, s, &r) != CARMINE_OK || carmine_to_int(vm, r, &i) != CARMINE_OK) j->ok = 0;
        j->result = (long)i;
    }
    carmine_script_free(vm, s);
    carmine_close(vm);
    return NULL;
}

/* Thread B tries to use a VM while thread A is inside one of its C methods. */
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER;
static int g_stage;

static carmine_value c_wait(carmine_vm *vm, carmine_value self, int argc, const carmine_value *argv,
                            carmine_value block, void *data) {
    (void)vm; (void)self; (void)argc; (void)argv; (void)block; (void)data;
    pthread_mutex_lock(&g_mu);
    g_stage = 1;
    pthread_cond_broadcast(&g_cv);
    while (g_stage != 2) pthread_cond_wait(&g_cv, &g_mu);
    pthread_mutex_unlock(&g_mu);
    return carmine_nil();
}

static void *intruder(void *arg) {
    carmine_vm *vm = arg;
    pthread_mutex_lock(&g_mu);
    while (g_stage != 1) pthread_cond_wait(&g_cv, &g_mu);
    pthread_mutex_unlock(&g_mu);
    carmine_value r;
    carmine_status st = carmine_eval(vm, "1", 1, NULL, &r);
    carmine_value v = carmine_cstr(vm, "x");
    pthread_mutex_lock(&g_mu);
    g_stage = (st == CARMINE_BUSY && v == CARMINE_UNDEF) ? 2 : -1;
    if (g_stage == -1) g_stage = 2, fprintf(stderr, "intruder was not refused\n"), exit(1);
    pthread_cond_broadcast(&g_cv);
    pthread_mutex_unlock(&g_mu);
    return NULL;
}

static void *use_vm(void *arg) {
    carmine_vm *vm = arg;
    carmine_value r;
    for (int k = 0; k < 50; k++) {
        if (carmine_eval(vm, "a = (1..2000).map(&:to_s); GC.start; a.size", 50, NULL, &r) != CARMINE_OK ||
            carmine_truthy(r) == 0) {
            fprintf(stderr, "use from another thread failed: %s\n", carmine_error_report(vm));
            exit(1);
        }
    }
    return NULL;
}

static void test_threads(void) {
    enum { N = 8 };
    pthread_t t[N];
    struct job jobs[N];
    for (int k = 0; k < N; k++) {
        jobs[k] = (struct job){.id = k};
        CHECK(pthread_create(&t[k], NULL, run_job, &jobs[k]) == 0);
    }
    for (int k = 0; k < N; k++) pthread_join(t[k], NULL);
    for (int k = 0; k < N; k++) {
        CHECK(jobs[k].ok);
        CHECK(jobs[k].result == 6765 + k + 500);
    }
    /* One VM used by several threads, one after another. */
    carmine_vm *vm = g_vm = carmine_open();
    for (int k = 0; k < 4; k++) {
        pthread_t u;
        CHECK(pthread_create(&u, NULL, use_vm, vm) == 0);
        pthread_join(u, NULL);
    }
    /* Refused while another thread is inside it. */
    carmine_value k = carmine_define_class(vm, "Gate", CARMINE_UNDEF);
    carmine_define_singleton_method(vm, k, "wait", c_wait, 0, 0, NULL);
    pthread_t in;
    CHECK(pthread_create(&in, NULL, intruder, vm) == 0);
    carmine_value r;
    CHECK(eval(vm, "Gate.wait; :done", &r) == CARMINE_OK && r == carmine_sym(vm, "done"));
    pthread_join(in, NULL);
    /* Ruby threads of one VM calling C methods. */
    carmine_value calc = carmine_define_class(vm, "Calc", CARMINE_UNDEF);
    static int64_t zero = 0;
    carmine_define_method(vm, calc, "add", c_add, 0, -1, &zero);
    CHECK_RUBY(vm, "4.times.map { |i| Thread.new { 200.times.sum { Calc.new.add(i, 1) } } }.map(&:value) == [200, 400, 600, 800]");
    carmine_close(vm);
    g_vm = NULL;
}

/* ---- precompiled bytecode (carmine --compile) ------------------------------------- */

static carmine_value c_name(carmine_vm *vm, carmine_value self, int argc, const carmine_value *argv,
                            carmine_value block, void *data) {
    (void)self; (void)argc; (void)argv; (void)block; (void)data;
    return carmine_cstr(vm, "bytecode");
}

static void test_bytecode(void) {
    const char *carmine = getenv("CARMINE_BIN");
    if (!carmine) {
        printf("skipped bytecode: CARMINE_BIN (the carmine command) not given\n");
        return;
    }
    char dir[] = "/tmp/carmine_bc_XXXXXX";
    CHECK(mkdtemp(dir));
    char src[256], cmb[256], cmd[1024];
    snprintf(src, sizeof src, "%s/handler.rb", dir);
    snprintf(cmb, sizeof cmb, "%s/handler.cmb", dir);
    FILE *f = fopen(src, "w");
    CHECK(f);
    fputs("def greet(n) = \"hi #{n}\"\n"
          "$count = ($count || 0) + 1\n"
          "raise ArgumentError, 'asked to fail' if $fail\n"
          "[greet(Apache.name), $count, __FILE__]\n", f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "'%s' --compile '%s' -o '%s'", carmine, src, cmb);
    CHECK(system(cmd) == 0);

    carmine_vm *vm = g_vm = carmine_open();
    carmine_value apache = carmine_define_module(vm, "Apache");
    carmine_define_module_function(vm, apache, "name", c_name, 0, 0, NULL);
    carmine_script *s = carmine_load_bytecode_file(vm, cmb);
    CHECK(s);
    carmine_value r;
    for (int k = 0; k < 100; k++) {
        CHECK(carmine_run(vm, s, &r) == CARMINE_OK);
        CHECK(str_is(vm, carmine_ary_get(vm, r, 0), "hi bytecode"));
        CHECK(to_i(vm, carmine_ary_get(vm, r, 1)) == 1); /* isolated like source */
        CHECK(str_is(vm, carmine_ary_get(vm, r, 2), src));
    }
    /* Errors carry the source's file and line. */
    carmine_gv_set(vm, "$fail", carmine_true());
    CHECK(carmine_run(vm, s, &r) == CARMINE_EXCEPTION);
    CHECK(strcmp(carmine_error_class(vm), "ArgumentError") == 0);
    char where[300];
    snprintf(where, sizeof where, "%s:3:in '<main>'", src);
    CHECK(strcmp(carmine_error_backtrace(vm, 0), where) == 0);
    carmine_gv_set(vm, "$fail", carmine_nil());
    carmine_script_free(vm, s);

    /* From memory; then damaged and foreign bytes are a LoadError, never a crash. */
    static char buf[1 << 16];
    f = fopen(cmb, "rb");
    CHECK(f);
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    CHECK(n > 0 && n < sizeof buf);
    s = carmine_load_bytecode(vm, buf, n);
    CHECK(s && carmine_run(vm, s, &r) == CARMINE_OK);
    carmine_script_free(vm, s);
    for (size_t at = 0; at < n; at += n / 23 + 1) {
        buf[at] ^= 0x5a;
        carmine_script *bad = carmine_load_bytecode(vm, buf, n);
        if (bad) { /* a change the checks cannot tell from valid code: it must still run safely */
            carmine_run(vm, bad, &r);
            carmine_script_free(vm, bad);
        } else {
            CHECK(strcmp(carmine_error_class(vm), "LoadError") == 0);
        }
        buf[at] ^= 0x5a;
    }
    CHECK(carmine_load_bytecode(vm, "puts 1", 6) == NULL);
    CHECK(strcmp(carmine_error_class(vm), "LoadError") == 0);
    CHECK(carmine_load_bytecode(vm, buf, n / 2) == NULL);
    CHECK(carmine_load_bytecode_file(vm, "/nonexistent.cmb") == NULL);
    CHECK(strcmp(carmine_error_class(vm), "Errno::ENOENT") == 0);
    carmine_close(vm);
    g_vm = NULL;
    remove(cmb);
    remove(src);
    rmdir(dir);
}

/* ---- lifecycle: open and close many VMs ------------------------------------------- */

static void test_lifecycle(int n) {
    g_freed = 0;
    for (int k = 0; k < n; k++) {
        carmine_vm *vm = g_vm = carmine_open();
        CHECK(vm);
        carmine_value point = carmine_define_class(vm, "Point", CARMINE_UNDEF);
        carmine_define_singleton_method(vm, point, "make", c_point_new, 2, 2, NULL);
        carmine_value r;
        const char *src = "p = Point.make(1, 2); h = {'a' => [1, 'b', :c, 2.5]}; "
                          "s = h.inspect * 3; Struct.new(:x).new(1); Class.new; proc { s }.call.size";
        CHECK(carmine_eval(vm, src, strlen(src), "life.rb", &r) == CARMINE_OK);
        carmine_script *s = carmine_compile(vm, "1 + 1", 5, "unfreed.rb"); /* freed by close */
        CHECK(s);
        carmine_close(vm);
    }
    g_vm = NULL;
    CHECK(g_freed == n);
}

/* A VM made in a forked child, as in a server that daemonizes (fork, setsid) before it
 * makes its VMs. Under valgrind, the child's main stack is reported a few KiB deep once
 * it grows (see heap/stack_scan.rs): every call was a SystemStackError. */
static void test_forked(void) {
    fflush(stdout);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        setsid();
        carmine_vm *vm = carmine_open();
        carmine_value r;
        const char *src = "def depth(n) = n == 0 ? 0 : 1 + depth(n - 1); [1, 2, 3].map { |x| x * 2 }.sum + depth(500)";
        carmine_status st = vm ? carmine_eval(vm, src, strlen(src), "forked.rb", &r) : CARMINE_INVALID;
        int64_t i = 0;
        int ok = st == CARMINE_OK && carmine_to_int(vm, r, &i) == CARMINE_OK && i == 512;
        if (!ok)
            fprintf(stderr, "forked child: status %d, %s: %s\n", st, vm ? carmine_error_class(vm) : "no VM", vm ? carmine_error_message(vm) : "");
        carmine_close(vm);
        _exit(ok ? 0 : 1);
    }
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(int argc, char **argv) {
    const char *what = argc > 1 ? argv[1] : "all";
    int all = strcmp(what, "all") == 0;
    if (all || !strcmp(what, "values")) test_values();
    if (all || !strcmp(what, "arrays")) test_arrays();
    if (all || !strcmp(what, "hashes")) test_hashes();
    if (all || !strcmp(what, "methods")) test_methods();
    if (all || !strcmp(what, "exceptions")) test_exceptions();
    if (all || !strcmp(what, "limits")) test_limits();
    if (all || !strcmp(what, "isolation")) test_isolation();
    if (all || !strcmp(what, "scripts")) test_scripts();
    if (all || !strcmp(what, "output")) test_output();
    if (all || !strcmp(what, "gc")) test_gc();
    if (all || !strcmp(what, "threads")) test_threads();
    if (all || !strcmp(what, "bytecode")) test_bytecode();
    if (all || !strcmp(what, "tasks")) test_tasks();
    if (all || !strcmp(what, "forked")) test_forked();
    if (all || !strcmp(what, "lifecycle")) test_lifecycle(argc > 2 ? atoi(argv[2]) : 100);
    printf("ok %s\n", what);
    return 0;
}
