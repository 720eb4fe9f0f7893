{#
  One row per run with exclusion windows: what get_job_goodput_with_exclusions
  accumulates before sanitising (goodput_exclusion.py, 0.2.3). That path is not
  the main computation minus the excluded time; it has its own rules, which
  this model follows:
  - every timed span loses the seconds inside an exclusion window, clamped at 0
    (step intervals, accelerator init, training prep, data loading, the gap
    from the last step before a restart to the job start after it, the last
    step to the job end), and those seconds are added to the excluded total,
    once per span: a data-loading interval inside a step is excluded twice;
    time between spans (OTHER) is never excluded;
  - a custom badput event counts against a step for every second it overlaps
    it (the main path: only events wholly inside the step);
  - a segment restarted at step 0 is computed, not dropped;
  - program startup: the first step's time minus the mean of the others (its
    own time when it is the only one);
  - DATA_LOADING_SYNC: the first data-loading interval after each (re)start,
    never counted twice;
  - checkpoint save and restore time are not read: no such Badput, and the
    blocking save time stays productive;
  - the last productive step is the largest over the segments;
  - elastic runs: no wait or re-initialisation time is accumulated (the
    elastic calculator does not override this path), so its three buckets
    are 0 and that time falls in OTHER.
  The total is the main path's (job start to job end or the evaluation time)
  minus the excluded seconds, never below 0.
#}

with

windows as (

    select * from {{ ref('int_goodput__exclusion_windows') }}

),

excluded_runs as (

    select distinct run_id from windows

),

totals as (

    select totals.*
    from {{ ref('int_goodput__run_totals') }} as totals
    inner join excluded_runs
        on excluded_runs.run_id = totals.run_id

),

step_pairs as (

    select * from {{ ref('int_goodput__exclusion_step_intervals') }}

),

custom_per_step as (

    select run_id, event_seq, sum(custom_seconds) as custom_seconds
    from {{ ref('int_goodput__exclusion_custom_in_steps') }}
    group by run_id, event_seq

),

adjusted_pairs as (

    select
        step_pairs.*,
        case
            when step_pairs.exclusion_class = 'productive'
                then greatest(0, step_pairs.raw_seconds - coalesce(custom_per_step.custom_seconds, 0)
                                 - step_pairs.excluded_seconds)
        end as adjusted_seconds,
        case
            when step_pairs.exclusion_class = 'wasted'
                then greatest(0, step_pairs.raw_seconds - step_pairs.excluded_seconds)
            else 0
        end as wasted_seconds
    from step_pairs
    left join custom_per_step
        on custom_per_step.run_id = step_pairs.run_id
        and custom_per_step.event_seq = step_pairs.event_seq

),

segment_sums as (

    select
        run_id,
        segment_no,
        sum(case when exclusion_class = 'productive' then 1 else 0 end) as productive_steps,
        coalesce(max(case when exclusion_class = 'productive' and is_first_step then adjusted_seconds end), 0)
            as first_step_seconds,
        coalesce(sum(case when exclusion_class = 'productive' and not is_first_step then adjusted_seconds end), 0)
            as later_steps_seconds,
        coalesce(sum(adjusted_seconds), 0) as adjusted_seconds,
        sum(wasted_seconds) as wasted_seconds,
        sum(excluded_seconds) as excluded_seconds
    from adjusted_pairs
    group by run_id, segment_no

),

segment_last_productive as (

    {# max_prod_step_count: the last productive interval's step, in the dict's order #}
    select run_id, segment_no, max_by(interval_step, event_seq) as max_productive_step
    from adjusted_pairs
    where exclusion_class = 'productive'
    group by run_id, segment_no

),

segment_results as (

    select
        segment_sums.run_id,
        segment_sums.segment_no,
        segment_sums.productive_steps,
        segment_sums.wasted_seconds,
        segment_sums.excluded_seconds,
        case
            when segment_sums.productive_steps = 0 then 0
            else greatest(0, segment_sums.first_step_seconds - case
                when segment_sums.productive_steps > 1
                    then segment_sums.later_steps_seconds / (segment_sums.productive_steps - 1)
                else segment_sums.first_step_seconds
            end)
        end as program_startup_seconds,
        coalesce(segment_last_productive.max_productive_step, 0) as max_productive_step
    from segment_sums
    left join segment_last_productive
        on segment_last_productive.run_id = segment_sums.run_id
        and segment_last_productive.segment_no = segment_sums.segment_no

),

steps as (

    select
        segment_sums.run_id,
        sum(case when segment_sums.productive_steps > 0 then 1 else 0 end) > 0 as has_productive_steps,
        sum(segment_sums.adjusted_seconds - segment_results.program_startup_seconds) as productive_seconds,
        sum(segment_results.program_startup_seconds) as program_startup_seconds,
        sum(segment_results.wasted_seconds) as wasted_progress_seconds,
        sum(segment_results.excluded_seconds) as excluded_seconds,
        max(segment_results.max_productive_step) as max_productive_step
    from segment_sums
    inner join segment_results
        on segment_results.run_id = segment_sums.run_id
        and segment_results.segment_no = segment_sums.segment_no
    group by segment_sums.run_id

),

recovery_gaps as (

    select
        disruptions.run_id,
        disruptions.disruption_no,
        disruptions.last_step_start_epoch as start_epoch,
        disruptions.restart_job_start_epoch as end_epoch
    from {{ ref('int_goodput__disruptions') }} as disruptions
    inner join excluded_runs
        on excluded_runs.run_id = disruptions.run_id
    where disruptions.restart_job_start_epoch > disruptions.last_step_start_epoch

),

recovery_gaps_excluded as (

    {{ goodput_exclusion_overlap('recovery_gaps', ['disruption_no', 'start_epoch', 'end_epoch'], 'windows') }}

),

recovery as (

    select
        run_id,
        sum(greatest(0, end_epoch - start_epoch - excluded_seconds)) as infrastructure_recovery_seconds,
        sum(excluded_seconds) as excluded_seconds
    from recovery_gaps_excluded
    group by run_id

),

setup_intervals as (

    select
        intervals.run_id,
        intervals.interval_kind,
        intervals.end_seq,
        intervals.start_epoch,
        intervals.end_epoch,
        -- sync: the first data-loading interval to complete after the job start or a restart
        row_number() over (
            partition by intervals.run_id, intervals.interval_kind, intervals.end_segment_no
            order by intervals.end_seq
        ) = 1 as is_first_in_segment
    from {{ ref('int_goodput__paired_intervals') }} as intervals
    inner join excluded_runs
        on excluded_runs.run_id = intervals.run_id
    where intervals.interval_kind in ('tpu_initialization', 'training_prep', 'data_loading')

),

setup_intervals_excluded as (

    {{ goodput_exclusion_overlap('setup_intervals', ['interval_kind', 'end_seq', 'start_epoch', 'end_epoch', 'is_first_in_segment'], 'windows') }}

),

setup as (

    select
        run_id,
        sum(case when interval_kind = 'tpu_initialization' then adjusted_seconds else 0 end)
            as tpu_initialization_seconds,
        sum(case when interval_kind = 'training_prep' then adjusted_seconds else 0 end) as training_prep_seconds,
        sum(case when interval_kind = 'data_loading' then adjusted_seconds else 0 end) as data_loading_seconds,
        sum(case when interval_kind = 'data_loading' and is_first_in_segment then adjusted_seconds else 0 end)
            as data_loading_sync_seconds,
        sum(excluded_seconds) as excluded_seconds
    from (
        select *, greatest(0, end_epoch - start_epoch - excluded_seconds) as adjusted_seconds
        from setup_intervals_excluded
    ) as adjusted
    group by run_id

),

last_step_tails as (

    -- the last step, productive once the job has ended: up to the job end, less what is excluded
    select
        totals.run_id,
        final_segments.max_step_start_epoch as start_epoch,
        totals.last_job_end_epoch as end_epoch
    from totals
    inner join {{ ref('int_goodput__segment_startup_and_wasted_progress') }} as final_segments
        on final_segments.run_id = totals.run_id
        and final_segments.is_final_segment
    where totals.last_job_end_epoch is not null
        and totals.last_job_end_epoch != 0

),

last_step_tails_excluded as (

    {{ goodput_exclusion_overlap('last_step_tails', ['start_epoch', 'end_epoch'], 'windows') }}

),

final as (

    select
        totals.run_id,
        totals.project_id,
        totals.run_name,
        coalesce(totals.total_elapsed_seconds, 0) as raw_total_seconds,
        coalesce(steps.excluded_seconds, 0) + coalesce(recovery.excluded_seconds, 0)
            + coalesce(setup.excluded_seconds, 0) + coalesce(tails.excluded_seconds, 0) as excluded_seconds,
        coalesce(steps.productive_seconds, 0)
            + coalesce(greatest(0, tails.end_epoch - tails.start_epoch - tails.excluded_seconds), 0)
            as productive_seconds,
        case
            when tails.run_id is not null then totals.last_recorded_step
            else coalesce(steps.max_productive_step, 0)
        end as max_productive_step,
        totals.disruptions,
        coalesce(steps.has_productive_steps, false) as has_productive_steps,
        coalesce(setup.tpu_initialization_seconds, 0) as tpu_initialization_seconds,
        coalesce(setup.training_prep_seconds, 0) as training_prep_seconds,
        coalesce(steps.program_startup_seconds, 0) as program_startup_seconds,
        coalesce(setup.data_loading_sync_seconds, 0) as data_loading_sync_seconds,
        coalesce(setup.data_loading_seconds, 0) - coalesce(setup.data_loading_sync_seconds, 0)
            as data_loading_async_seconds,
        cast(0 as {{ dbt.type_float() }}) as checkpoint_save_seconds,
        cast(0 as {{ dbt.type_float() }}) as checkpoint_restore_seconds,
        coalesce(steps.wasted_progress_seconds, 0) as wasted_progress_seconds,
        coalesce(recovery.infrastructure_recovery_seconds, 0) as infrastructure_recovery_seconds,
        {# ElasticGoodputCalculator's breakdown lists its three buckets on this path too, but the exclusion
           loop accumulates no wait or re-initialisation: 0, and OTHER takes that time #}
        totals.is_elastic,
        {%- for badput_type, column in goodput_elastic_badput_columns() %}
        {{ goodput_float('0') }} as {{ column }}{{ "," if not loop.last }}
        {%- endfor %}
    from totals
    left join steps on steps.run_id = totals.run_id
    left join recovery on recovery.run_id = totals.run_id
    left join setup on setup.run_id = totals.run_id
    left join last_step_tails_excluded as tails on tails.run_id = totals.run_id

)

select
    *,
    greatest(0, raw_total_seconds - excluded_seconds) as adjusted_total_seconds
from final
