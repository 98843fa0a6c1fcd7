/* registry.c — the one table of every template.
 *
 * Adding a template (docs/adding-a-template.md walks through it):
 *   1. Copy templates/skeleton.c to templates/<name>.c and rename its
 *      symbols; the build picks the file up by itself (file glob).
 *   2. Declare it below with VAT_TEMPLATE(<name>) and list it in
 *      vat_registry[] — one line each; order is `vat list` order.
 *   3. Give it a [templates.<name>] section in seeds.toml if its defaults
 *      are not what the corpus wants.
 *   4. Rebuild and run `make test`: the contract test loops over every
 *      registered template (gold 1, trap 0 with the gate passed, malformed
 *      fails the gate, confirm agrees, same seed -> same bytes).
 *   5. Add edge-case tests in tests/test_<name>.c.
 *
 * Exports vat_registry[] and vat_template_find(). */
#include <string.h>

#include "template.h"

#define VAT_TEMPLATE(n) extern const struct vat_template vat_tmpl_##n
VAT_TEMPLATE(grouped_sum);
VAT_TEMPLATE(grouped_mean);
VAT_TEMPLATE(grouped_count);
VAT_TEMPLATE(filtered_total);
VAT_TEMPLATE(top_n);
VAT_TEMPLATE(dedupe_aggregate);
VAT_TEMPLATE(date_window);
VAT_TEMPLATE(pivot);
VAT_TEMPLATE(join_aggregate);
VAT_TEMPLATE(threshold_flags);
VAT_TEMPLATE(payments_reconciliation);
VAT_TEMPLATE(regex_iso_dates);
VAT_TEMPLATE(regex_amounts);
VAT_TEMPLATE(regex_order_ids);
VAT_TEMPLATE(sql_paid_revenue);
VAT_TEMPLATE(sql_order_counts);
VAT_TEMPLATE(sql_paid_order_counts);
VAT_TEMPLATE(dup_header);
VAT_TEMPLATE(unanswerable);

const struct vat_template *const vat_registry[] = {
    &vat_tmpl_grouped_sum,
    &vat_tmpl_grouped_mean,
    &vat_tmpl_grouped_count,
    &vat_tmpl_filtered_total,
    &vat_tmpl_top_n,
    &vat_tmpl_dedupe_aggregate,
    &vat_tmpl_date_window,
    &vat_tmpl_pivot,
    &vat_tmpl_join_aggregate,
    &vat_tmpl_threshold_flags,
    &vat_tmpl_payments_reconciliation,
    &vat_tmpl_regex_iso_dates,
    &vat_tmpl_regex_amounts,
    &vat_tmpl_regex_order_ids,
    &vat_tmpl_sql_paid_revenue,
    &vat_tmpl_sql_order_counts,
    &vat_tmpl_sql_paid_order_counts,
    &vat_tmpl_dup_header,
    &vat_tmpl_unanswerable,
    NULL,
};

const struct vat_template *vat_template_find(const char *name)
{
    for (size_t i = 0; vat_registry[i]; i++)
        if (strcmp(vat_registry[i]->name, name) == 0)
            return vat_registry[i];
    return NULL;
}
