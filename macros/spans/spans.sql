{#
  Arithmetic on spans: rows with start_epoch and end_epoch (epoch seconds).
#}

{#- Seconds two spans (relation aliases a and b) have in common; 0 when they do not meet. -#}
{% macro goodput_overlap_seconds(a, b) -%}
    greatest(0, least({{ a }}.end_epoch, {{ b }}.end_epoch) - greatest({{ a }}.start_epoch, {{ b }}.start_epoch))
{%- endmacro %}

{#- The union of each run's spans (run_id, start_epoch, end_epoch) as disjoint
    spans: overlapping or touching spans become one, so a second inside
    several of them is counted once. -#}
{% macro goodput_merged_spans(spans) -%}
    select
        run_id,
        min(start_epoch) as start_epoch,
        max(end_epoch) as end_epoch
    from (
        select
            run_id,
            start_epoch,
            end_epoch,
            -- a span opens a new island unless an earlier one reaches its start
            sum(case when start_epoch <= reach_before then 0 else 1 end) over (
                partition by run_id order by start_epoch, end_epoch rows between unbounded preceding and current row
            ) as island_no
        from (
            select
                run_id,
                start_epoch,
                end_epoch,
                max(end_epoch) over (
                    partition by run_id order by start_epoch, end_epoch rows between unbounded preceding and 1 preceding
                ) as reach_before
            from {{ spans }}
        ) as reached
    ) as islands
    group by run_id, island_no
{%- endmacro %}
