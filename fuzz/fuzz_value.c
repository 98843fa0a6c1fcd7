/* fuzz_value.c — libFuzzer harness of the value checker.  Input: one byte
 * choosing a spec (the specs of tests/data/value_cases.txt), then the
 * answer.  Every verdict must be well formed (fuzz_common.h). */
#include <stddef.h>
#include <stdint.h>

#include "fuzz_common.h"
#include "verifiers.h"

static const char *const specs[] = {
    "{\"checker\":\"value\",\"shape\":\"number\",\"expected\":12}",
    "{\"checker\":\"value\",\"shape\":\"number\",\"expected\":1234.5}",
    "{\"checker\":\"value\",\"shape\":\"number\",\"expected\":1000000,\"integer\":true}",
    "{\"checker\":\"value\",\"shape\":\"number\",\"expected\":100,\"rel_tol\":1e-6,\"abs_tol\":0}",
    "{\"checker\":\"value\",\"shape\":\"number\",\"expected\":0,\"rel_tol\":0,\"abs_tol\":0.01}",
    "{\"checker\":\"value\",\"shape\":\"object\",\"expected\":{\"north\":1200.5,\"south\":80,"
    "\"west\":0}}",
    "{\"checker\":\"value\",\"shape\":\"list\",\"items\":\"string\",\"ordered\":true,\"unique\":"
    "true,\"expected\":[\"acme\",\"globex\",\"initech\"]}",
    "{\"checker\":\"value\",\"shape\":\"list\",\"items\":\"string\",\"ordered\":false,"
    "\"expected\":[\"A-1\",\"A-2\",\"B-7\"]}",
    "{\"checker\":\"value\",\"shape\":\"list\",\"items\":\"number\",\"ordered\":true,"
    "\"expected\":[3,1.5,2]}",
    "{\"checker\":\"value\",\"shape\":\"list\",\"items\":\"number\",\"ordered\":false,\"unique\":"
    "true,\"expected\":[10,20,30]}",
    "{\"checker\":\"value\",\"shape\":\"object_of_objects\",\"integer\":true,\"expected\":{"
    "\"2026-03\":{\"dhl\":4,\"ups\":0},\"2026-04\":{\"dhl\":1,\"ups\":2}}}",
    "{\"checker\":\"value\",\"shape\":\"object_of_strings\",\"expected\":{\"ORD-1\":\"shipped\","
    "\"ORD-2\":\"pending\",\"ORD-3\":\"cancelled\"}}",
};
#define NSPECS (sizeof specs / sizeof specs[0])
static json_t *parsed[NSPECS];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t k = data[0] % NSPECS;
    if (!parsed[k])
        parsed[k] = json_loads(specs[k], 0, NULL);
    struct vat_verdict v = vat_check_value(parsed[k], (const char *)data + 1, size - 1);
    fuzz_assert_verdict(&v);
    return 0;
}
