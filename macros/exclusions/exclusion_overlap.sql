{#
  Seconds of each span that fall inside its run's exclusion windows
  (exclusion_utils.get_exclusion_overlap: per window, max(0, min(end, window end)
  - max(start, window start)), summed). `spans` has run_id, the key columns,
  start_epoch and end_epoch; `windows` is int_goodput__exclusion_windows (merged,
  so no second of a span is counted twice). Every span comes out, with 0 when
  no window touches it.
#}

{% macro goodput_exclusion_overlap(spans, key_columns, windows) -%}
    select
        spans.run_id,
        {%- for column in key_columns %}
        spans.{{ column }},
        {%- endfor %}
        coalesce(sum(
            case
                when windows.run_id is null then 0
                when least(spans.end_epoch, windows.end_epoch) > greatest(spans.start_epoch, windows.start_epoch)
                    then least(spans.end_epoch, windows.end_epoch) - greatest(spans.start_epoch, windows.start_epoch)
                else 0
            end
        ), 0) as excluded_seconds
    from {{ spans }} as spans
    left join {{ windows }} as windows
        on windows.run_id = spans.run_id
        and windows.start_epoch < spans.end_epoch
        and windows.end_epoch > spans.start_epoch
    group by spans.run_id{% for column in key_columns %}, spans.{{ column }}{% endfor %}
{%- endmacro %}
