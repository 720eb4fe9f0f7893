{{
    config(
        materialized='incremental',
        incremental_strategy=goodput_incremental_strategy(),
        unique_key=goodput_incremental_key(['run_id', 'window_end_epoch'], ['window_seconds']),
        partition_by=goodput_partition_by('window_end_at'),
        cluster_by=goodput_cluster_by(['run_id', 'window_seconds']),
        on_schema_change='fail',
        goodput_rebuilt_when='evaluated',
        pre_hook="{{ goodput_forget_windows_off_the_grid(ref('int_goodput__rolling_window_ends')) }}",
        post_hook=goodput_incremental_state_hooks()
    )
}}
{{ goodput_check_incremental_state() }}
-- depends_on: {{ ref('int_goodput__rolling_window_ends') }}
{#
  One row per (run, window size, window end on the grid): the full history of
  the library monitor's rolling Goodput. Elapsed time counts from the later of
  the window start and the job start to the earlier of the window end and the
  job end (or evaluation time); productive seconds and disruptions are what of
  the cumulative attribution falls inside. max_productive_step is what the
  library's get_job_goodput would report at the window end: the step of the
  last productive interval ended by then in the current segment (0 right
  after a restart), or the last recorded step once the job has ended.
  Elastic runs also get both slice efficiencies over the window's elapsed
  time (macros/elastic/slice_efficiency.sql), null for other runs.
#}

with

rolling_values as (

    select * from {{ ref('int_goodput__rolling_window_values') }}
    {% if is_incremental() %}
    -- (an empty table has no max: everything is new)
    where computed_at > (select coalesce(max(computed_at), cast('1970-01-01' as {{ dbt.type_timestamp() }})) from {{ this }})
    {% endif %}

),

badput_types as (

    select * from {{ ref('badput_types') }}

),

totals as (

    select * from {{ ref('int_goodput__run_totals') }}
    where {{ goodput_run_is_rebuilt() }}

),

per_window as (

    {{ goodput_window_totals('rolling_values', 'badput_types', extra=['computed_at']) }}

),

slice_counts as (

    {{ goodput_slice_count_records(ref('int_goodput__entries_ordered')) }}
        and {{ goodput_run_is_rebuilt() }}

),

slice_efficiency as (

    -- each window over the job time it holds (elastic runs only)
    {{ goodput_window_slice_efficiency('slice_counts', 'rolling_values', keys=['run_id', 'window_seconds', 'window_end_epoch']) }}

),

step_events as (

    -- a productive interval reaches its step when it ends
    select
        intervals.run_id,
        intervals.end_epoch - totals.elapsed_origin_epoch as at_offset,
        intervals.segment_no,
        1 as event_order,
        intervals.interval_step as step
    from {{ ref('int_goodput__step_intervals') }} as intervals
    inner join totals
        on totals.run_id = intervals.run_id
    where {{ goodput_run_is_rebuilt('intervals.run_id', keyed=true) }}
        and intervals.interval_class = 'productive'

    union all

    -- a restart starts over: nothing is productive in the new segment yet
    select
        disruptions.run_id,
        disruptions.resume_start_epoch - totals.elapsed_origin_epoch,
        disruptions.disruption_no,
        0,
        0
    from {{ ref('int_goodput__disruptions') }} as disruptions
    inner join totals
        on totals.run_id = disruptions.run_id
    where {{ goodput_run_is_rebuilt('disruptions.run_id') }}

    union all

    -- an ended job completed its last recorded step
    select
        run_id,
        total_elapsed_seconds,
        disruptions,
        2,
        last_recorded_step
    from totals
    where last_job_end_epoch is not null and last_recorded_step > 0

),

window_ends as (

    select distinct run_id, end_offset
    from per_window

),

{#- Each window end reads the last step event at or before it, so the sweep starts at each run's last
    event before its earliest window end: the few minutes of windows an hourly build adds, not the
    run's every productive step (at L 1M, whose sort was most of this model). -#}
sweep_from as (

    select
        earliest_ends.run_id,
        max(step_events.at_offset) as at_offset
    from (
        select run_id, min(end_offset) as end_offset
        from window_ends
        group by run_id
    ) as earliest_ends
    left join step_events
        on step_events.run_id = earliest_ends.run_id
        and step_events.at_offset < earliest_ends.end_offset
        and step_events.step is not null
    group by earliest_ends.run_id

),

swept as (

    select
        run_id,
        at_offset,
        is_point,
        last_value(step ignore nulls) over (
            partition by run_id
            order by at_offset, is_point, segment_no, event_order
            rows between unbounded preceding and current row
        ) as max_step
    from (
        select step_events.run_id, step_events.at_offset, 0 as is_point, step_events.segment_no,
            step_events.event_order, step_events.step
        from step_events
        inner join sweep_from
            on sweep_from.run_id = step_events.run_id
        where sweep_from.at_offset is null
            or step_events.at_offset >= sweep_from.at_offset
        union all
        select run_id, end_offset, 1, null, null, null from window_ends
    ) as merged

)

select
    per_window.run_id,
    totals.project_id,
    totals.run_name,
    per_window.window_seconds,
    per_window.window_start_at,
    per_window.window_end_at,
    per_window.elapsed_seconds,
    per_window.productive_seconds,
    per_window.goodput_pct,
    per_window.badput_seconds,
    coalesce(swept.max_step, 0) as max_productive_step,
    per_window.disruptions,
    per_window.is_partial,
    slice_efficiency.stepping_slice_efficiency,
    slice_efficiency.available_slice_efficiency,
    slice_efficiency.stepping_slice_efficiency_observed,
    slice_efficiency.available_slice_efficiency_observed,
    per_window.window_end_epoch,
    per_window.computed_at
from per_window
inner join totals
    on totals.run_id = per_window.run_id
left join slice_efficiency
    on slice_efficiency.run_id = per_window.run_id
    and slice_efficiency.window_seconds = per_window.window_seconds
    and slice_efficiency.window_end_epoch = per_window.window_end_epoch
left join swept
    on swept.run_id = per_window.run_id
    and swept.at_offset = per_window.end_offset
    and swept.is_point = 1
{{ goodput_rows_by_run() }}
