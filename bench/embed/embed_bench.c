/*
 * libcarmine costs a server module pays (issue 14): opening and closing a VM, running a
 * compiled "hello world" handler as an isolated run, evaluating (compile + run + free) a
 * small script, the memory of one VM, and whether memory stays flat over many runs of an
 * allocating script (the seed's fig. 8 workload: a 1,000-element array and a string per
 * request). Reports numbers; asserts nothing.   Build and run: bench/embed/run
 *
 * `bench/embed/run loop run|start|shared N` only runs the "hello world" handler N times
 * (carmine_run, carmine_start, carmine_run_shared) after a warm-up of 1,000 runs: the
 * loop to count instructions per run with callgrind (docs/benchmarks.md, issue 14).
 */
#include <carmine.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static long rss_kb(void) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %ld kB", &kb) == 1) break;
    if (f) fclose(f);
    return kb;
}

static size_t out_bytes;
static void sink(void *data, const char *bytes, size_t len) {
    (void)data; (void)bytes;
    out_bytes += len;
}

static carmine_value c_uri(carmine_vm *vm, carmine_value self, int argc, const carmine_value *argv,
                           carmine_value block, void *data) {
    (void)self; (void)argc; (void)argv; (void)block; (void)data;
    return carmine_cstr(vm, (const char *)carmine_userdata(vm));
}

static void die(carmine_vm *vm, const char *what) {
    fprintf(stderr, "%s failed: %s\n", what, vm ? carmine_error_report(vm) : "");
    exit(1);
}

/* The C method Nginx.rputs / Apache.rputs of the server modules, reduced to its calls
 * into libcarmine: the bytes of the argument, appended to the response. */
static carmine_value c_rputs(carmine_vm *vm, carmine_value self, int argc, const carmine_value *argv,
                             carmine_value block, void *data) {
    (void)self; (void)argc; (void)block; (void)data;
    size_t len;
    if (carmine_str_ptr(vm, argv[0], &len) == NULL) return CARMINE_UNDEF;
    out_bytes += len;
    return carmine_nil();
}

/* `loop MODE N`: N runs of the servers' hello world handler, nothing else. */
static int run_loop(const char *mode, int n) {
    carmine_vm *vm = carmine_open();
    carmine_value mod = carmine_define_module(vm, "Nginx");
    carmine_define_module_function(vm, mod, "rputs", c_rputs, 1, 1, NULL);
    carmine_set_stdout(vm, sink, NULL);
    const char *hello = "Nginx.rputs \"hello world\\n\"";
    carmine_script *s = carmine_compile(vm, hello, strlen(hello), "hello.rb");
    if (!s) die(vm, "compile");
    int start = strcmp(mode, "start") == 0, shared = strcmp(mode, "shared") == 0;
    for (int k = 0; k < 1000 + n; k++) {
        carmine_status st;
        if (start) {
            carmine_task *t;
            carmine_wait w;
            st = carmine_start(vm, s, &t, &w, NULL);
        } else {
            st = shared ? carmine_run_shared(vm, s, NULL) : carmine_run(vm, s, NULL);
        }
        if (st != CARMINE_OK) die(vm, mode);
    }
    carmine_script_free(vm, s);
    carmine_close(vm);
    printf("%d runs (%s), %zu bytes written\n", n, mode, out_bytes);
    return 0;
}

int main(int argc, char **argv) {
    if (argc > 3 && strcmp(argv[1], "loop") == 0) return run_loop(argv[2], atoi(argv[3]));
    int requests = argc > 1 ? atoi(argv[1]) : 50000;

    /* Open/close. */
    int n = 200;
    double t0 = now();
    for (int k = 0; k < n; k++) carmine_close(carmine_open());
    double open_close = (now() - t0) / n;

    /* Memory of one VM: RSS growth with 100 VMs open, and the VM's own heap figure. */
    enum { VMS = 100 };
    carmine_vm *vms[VMS];
    long rss0 = rss_kb();
    for (int k = 0; k < VMS; k++) vms[k] = carmine_open();
    long rss1 = rss_kb();
    size_t heap = carmine_memory_usage(vms[0]);
    for (int k = 0; k < VMS; k++) carmine_close(vms[k]);

    carmine_vm *vm = carmine_open();
    carmine_value mod = carmine_define_module(vm, "Apache");
    carmine_define_module_function(vm, mod, "uri", c_uri, 0, 0, NULL);
    carmine_set_stdout(vm, sink, NULL);
    carmine_set_userdata(vm, "/hello");

    /* Hello world, compiled once, run isolated per request. */
    const char *hello = "puts \"Hello from #{Apache.uri}\"";
    carmine_script *s = carmine_compile(vm, hello, strlen(hello), "hello.rb");
    if (!s) die(vm, "compile");
    for (int k = 0; k < 1000; k++) carmine_run(vm, s, NULL);
    t0 = now();
    for (int k = 0; k < requests; k++)
        if (carmine_run(vm, s, NULL) != CARMINE_OK) die(vm, "run");
    double run_us = (now() - t0) / requests * 1e6;
    t0 = now();
    for (int k = 0; k < requests; k++)
        if (carmine_run_shared(vm, s, NULL) != CARMINE_OK) die(vm, "run_shared");
    double shared_us = (now() - t0) / requests * 1e6;

    /* Evaluating source per request (compile + run + free the code). */
    int evals = requests / 5;
    t0 = now();
    for (int k = 0; k < evals; k++)
        if (carmine_eval(vm, hello, strlen(hello), "hello.rb", NULL) != CARMINE_OK) die(vm, "eval");
    double eval_us = (now() - t0) / evals * 1e6;

    /* Memory over many runs of an allocating script. */
    const char *alloc = "a = Array.new(1000) { |i| i }; s = 'x' * 1000 + a.sum.to_s; $last = s.size";
    carmine_script *as = carmine_compile(vm, alloc, strlen(alloc), "alloc.rb");
    long at5000 = 0, at_end = 0;
    size_t heap5000 = 0, heap_end = 0;
    t0 = now();
    for (int k = 1; k <= requests; k++) {
        if (carmine_run(vm, as, NULL) != CARMINE_OK) die(vm, "alloc run");
        if (k == 5000) at5000 = rss_kb(), heap5000 = carmine_memory_usage(vm);
    }
    double alloc_us = (now() - t0) / requests * 1e6;
    at_end = rss_kb();
    heap_end = carmine_memory_usage(vm);
    carmine_script_free(vm, s);
    carmine_script_free(vm, as);
    carmine_close(vm);

    printf("open+close one VM:              %8.0f us\n", open_close * 1e6);
    printf("RSS per open VM (100 open):     %8.0f KiB\n", (rss1 - rss0) / (double)VMS);
    printf("heap of a fresh VM:             %8.0f KiB\n", heap / 1024.0);
    printf("hello world, isolated run:      %8.2f us  (%.0f runs/s)\n", run_us, 1e6 / run_us);
    printf("hello world, shared run:        %8.2f us  (%.0f runs/s)\n", shared_us, 1e6 / shared_us);
    printf("hello world, eval (compile+run):%8.2f us  (%.0f evals/s)\n", eval_us, 1e6 / eval_us);
    printf("allocating script, isolated:    %8.2f us\n", alloc_us);
    printf("RSS at run 5,000 / %d:     %ld / %ld KiB (%+.2f%%)\n", requests, at5000, at_end, 100.0 * (at_end - at5000) / at5000);
    printf("VM heap at run 5,000 / %d: %zu / %zu KiB\n", requests, heap5000 / 1024, heap_end / 1024);
    return 0;
}
