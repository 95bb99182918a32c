/*
 * mod_hello: the "Hello World" content handler in C, the baseline of the seed's table 2.
 * `SetHandler hello` answers every request with "hello world\n" (text/plain); anything else
 * is declined. No state, no allocation beyond what Apache's response path does itself.
 */
#include "httpd.h"
#include "http_config.h"
#include "http_protocol.h"

static int hello_handler(request_rec *r)
{
    if (r->handler == NULL || strcmp(r->handler, "hello") != 0)
        return DECLINED;
    ap_set_content_type(r, "text/plain");
    ap_rputs("hello world\n", r);
    return OK;
}

static void hello_register_hooks(apr_pool_t *p)
{
    (void)p;
    ap_hook_handler(hello_handler, NULL, NULL, APR_HOOK_MIDDLE);
}

module AP_MODULE_DECLARE_DATA hello_module = {
    STANDARD20_MODULE_STUFF, NULL, NULL, NULL, NULL, NULL, hello_register_hooks
};
