{#
  Slice efficiency of elastic (Pathways) runs, as
  ElasticGoodputCalculator._compute_time_weighted_efficiency computes it: over
  [start, end], the share of slices stepping (active / total) and available
  (available / total), each slice-count record holding until the next, time
  weighted and divided by end - start.
  - The record in force at the start is the last one at or before it (in
    processing order among equal times); records after the start and before
    the end change it. Before the first record the share counts as 0: a run
    whose first record comes late, or a window that opens before any record,
    scores lower than its slices were (the library's figure, kept as is).
  - A missing active or available count is 0, a total below 1 is 1.
  - 0.0 where there is no record at or before the end or end <= start; null
    where the run has no slice-count record at all (the library then reports
    no efficiency).

  goodput_slice_count_records(entries): one row per slice-count entry of a
  relation of ordered entries (int_goodput__entries_ordered's columns):
  run_id, event_seq, record_epoch, stepping_share, available_share.

  goodput_slice_efficiency(records, bounds, keys): one row per row of `bounds`
  (its `keys`, which begin with run_id, then start_epoch and end_epoch):
  stepping_slice_efficiency, available_slice_efficiency (the library's), and
  stepping_slice_efficiency_observed, available_slice_efficiency_observed: the
  same weighted over the time some record was in force only (from the record
  in force at the start, or the first one after it), so the time before the
  first record is unknown rather than 0 slices; null where no record is in
  force before the end.

  goodput_window_slice_efficiency(records, window_values, keys): the same over
  each window of a relation of window values (the rolling marts' inputs: run_id,
  `keys`, elapsed_origin_epoch, start_offset, end_offset), each window over the
  job time it holds, as its elapsed_seconds counts it; runs with records only.
#}

{% macro goodput_slice_count_records(entries) -%}
    select
        run_id,
        event_seq,
        elastic_slice_counts_epoch as record_epoch,
        coalesce(active_slices, 0) * 1.0 / greatest(coalesce(total_slices, 1), 1) as stepping_share,
        coalesce(available_slices, 0) * 1.0 / greatest(coalesce(total_slices, 1), 1) as available_share
    from {{ entries }}
    where elastic_slice_counts_epoch is not null
{%- endmacro %}

{% macro goodput_slice_seconds_at(records, points) -%}
    {#- One row per row of `points` (run_id, at_epoch; distinct) of a run with
        records: the slice-seconds stepping and available from the run's first
        record to at_epoch (0 before it), and the seconds some record was in
        force by then (covered_seconds). The record in force at a time is the
        last one at or before it, in processing order among equal times. -#}
    select
        run_id,
        at_epoch,
        case when in_force_epoch is null then 0.0
            else stepping_before + stepping_share * (at_epoch - in_force_epoch) end as stepping_seconds,
        case when in_force_epoch is null then 0.0
            else available_before + available_share * (at_epoch - in_force_epoch) end as available_seconds,
        case when in_force_epoch is null then 0.0 else at_epoch - first_epoch end as covered_seconds
    from (
        select
            run_id,
            at_epoch,
            is_point,
            {%- for column in ['record_epoch', 'first_epoch', 'stepping_before', 'stepping_share',
                               'available_before', 'available_share'] %}
            last_value({{ column }} ignore nulls) over (
                partition by run_id order by at_epoch, is_point, point_seq rows between unbounded preceding and current row
            ) as {{ 'in_force_epoch' if column == 'record_epoch' else column }}{{ "," if not loop.last }}
            {%- endfor %}
        from (
            select
                run_id,
                record_epoch as at_epoch,
                0 as is_point,
                event_seq as point_seq,
                record_epoch,
                min(record_epoch) over (partition by run_id) as first_epoch,
                coalesce(sum(stepping_share * (next_epoch - record_epoch)) over (
                    partition by run_id order by record_epoch, event_seq
                    rows between unbounded preceding and 1 preceding
                ), 0) as stepping_before,
                stepping_share,
                coalesce(sum(available_share * (next_epoch - record_epoch)) over (
                    partition by run_id order by record_epoch, event_seq
                    rows between unbounded preceding and 1 preceding
                ), 0) as available_before,
                available_share
            from (
                select
                    records.*,
                    lead(record_epoch) over (partition by run_id order by record_epoch, event_seq) as next_epoch
                from {{ records }} as records
            ) as chained
            union all
            select
                points.run_id,
                points.at_epoch,
                1,
                0,
                null, null, null, null, null, null
            from {{ points }} as points
            where points.run_id in (select run_id from {{ records }})
        ) as merged
    ) as swept
    where is_point = 1
{%- endmacro %}

{% macro goodput_slice_efficiency(records, bounds, keys=['run_id']) -%}
    {#- Each interval is the difference of the slice-seconds at its end and at
        its start (goodput_slice_seconds_at), so any number of intervals cost
        one sweep of the records and their ends, however long they are. -#}
    select
        {% for key in keys %}ends.{{ key }},
        {% endfor -%}
        case
            when count(seconds_at.run_id) = 0 then null
            when ends.end_epoch <= ends.start_epoch then 0.0
            else sum(ends.sign * seconds_at.stepping_seconds) / (ends.end_epoch - ends.start_epoch)
        end as stepping_slice_efficiency,
        case
            when count(seconds_at.run_id) = 0 then null
            when ends.end_epoch <= ends.start_epoch then 0.0
            else sum(ends.sign * seconds_at.available_seconds) / (ends.end_epoch - ends.start_epoch)
        end as available_slice_efficiency,
        case when ends.end_epoch > ends.start_epoch then
            sum(ends.sign * seconds_at.stepping_seconds) / nullif(sum(ends.sign * seconds_at.covered_seconds), 0)
        end as stepping_slice_efficiency_observed,
        case when ends.end_epoch > ends.start_epoch then
            sum(ends.sign * seconds_at.available_seconds) / nullif(sum(ends.sign * seconds_at.covered_seconds), 0)
        end as available_slice_efficiency_observed
    from (
        {%- for at_end, sign in [('end_epoch', '1.0'), ('start_epoch', '-1.0')] %}
        select
            {% for key in keys %}{{ key }},
            {% endfor -%}
            start_epoch,
            end_epoch,
            {{ at_end }} as at_epoch,
            {{ sign }} as sign
        from {{ bounds }}
        {{ "union all" if not loop.last }}
        {%- endfor %}
    ) as ends
    left join (
        {{ goodput_slice_seconds_at(records,
            '(select run_id, start_epoch as at_epoch from ' ~ bounds ~ ' union distinct select run_id, end_epoch from ' ~ bounds ~ ')') }}
    ) as seconds_at
        on seconds_at.run_id = ends.run_id
        and seconds_at.at_epoch = ends.at_epoch
    group by {% for key in keys %}ends.{{ key }}, {% endfor %}ends.start_epoch, ends.end_epoch
{%- endmacro %}

{% macro goodput_window_slice_efficiency(records, window_values, keys) -%}
    {%- set bounds -%}
    (
        select distinct
            {{ keys | join(', ') }},
            elapsed_origin_epoch + start_offset as start_epoch,
            elapsed_origin_epoch + end_offset as end_epoch
        from {{ window_values }}
        where run_id in (select run_id from {{ records }})
    ) as elastic_windows
    {%- endset -%}
    {{ goodput_slice_efficiency(records, bounds, keys) }}
{%- endmacro %}
