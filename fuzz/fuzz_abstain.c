/* fuzz_abstain.c — libFuzzer harness of the abstain checker.  Input: one
 * byte choosing a spec (answerable or not, with and without a shape), then
 * the answer.  Every verdict must be well formed (fuzz_common.h). */
#include <stddef.h>
#include <stdint.h>

#include "fuzz_common.h"
#include "verifiers.h"

static const char *const specs[] = {
    "{\"checker\":\"abstain\",\"answerable\":false,\"abstention\":{\"answerable\":false},"
    "\"shape\":\"number\"}",
    "{\"checker\":\"abstain\",\"answerable\":true,\"abstention\":{\"answerable\":false},"
    "\"shape\":\"object\",\"expected\":{\"north\":10,\"south\":2.5}}",
    "{\"checker\":\"abstain\",\"answerable\":false,\"abstention\":{\"answerable\":false}}",
    "{\"checker\":\"abstain\",\"answerable\":true,\"abstention\":\"UNANSWERABLE\","
    "\"shape\":\"list\",\"items\":\"string\",\"ordered\":false,\"expected\":[\"a\",\"b\"]}",
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
    struct vat_verdict v = vat_check_abstain(parsed[k], (const char *)data + 1, size - 1);
    fuzz_assert_verdict(&v);
    return 0;
}
