{{ config(**goodput_incremental_by_run('evaluated')) }}
{{ goodput_check_incremental_state() }}
{#
  One row per run: what GoodputCalculator.get_job_goodput and
  get_step_deviation report for it, for every run in the warehouse at once,
  and for elastic runs the slice efficiencies ElasticGoodputCalculator's
  get_job_goodput_details adds: time weighted from the first job start over
  the total elapsed time (macros/elastic/slice_efficiency.sql).

  Beside the library's figures for elastic runs, corrected ones (not library
  outputs, docs/semantics.md#elastic-runs): the library adds wait and
  re-initialisation time as Badput but leaves it in productive time, so
  productive_seconds_net_of_elastic takes out the productive time located
  (as the rolling marts locate it) while some wait or re-initialisation was
  under way, each second once; and elastic_slice_down_unnamed_seconds says how
  much of ELASTIC_SLICE_DOWN comes from waits whose type does not say
  slice_down (the library files every wait without scale_up there).
#}

with

totals as (

    select * from {{ ref('int_goodput__run_totals') }}
    where {{ goodput_run_is_rebuilt() }}

),

badput as (

    select
        run_id,
        sum(case when counts_against_goodput then badput_seconds else 0 end) as badput_seconds,
        max(case when badput_type = 'OTHER' then badput_seconds end) as other_seconds,
        max(case when was_sanitized then 1 else 0 end) = 1 as has_sanitized_badput
    from {{ ref('int_goodput__badput_buckets') }}
    where {{ goodput_run_is_rebuilt() }}
    group by run_id

),

slice_counts as (

    {{ goodput_slice_count_records(ref('int_goodput__entries_ordered')) }}
        and {{ goodput_run_is_rebuilt() }}

),

job_spans as (

    {# the library's job start is a datetime (to the microsecond); its end, that plus the total #}
    select
        run_id,
        {{ goodput_epoch_to_microseconds('first_job_start_epoch') }} as start_epoch,
        {{ goodput_epoch_to_microseconds('first_job_start_epoch') }} + total_elapsed_seconds as end_epoch
    from totals

),

slice_efficiency as (

    {{ goodput_slice_efficiency('slice_counts', 'job_spans') }}

),

elastic_pairs as (

    select * from {{ ref('int_goodput__paired_intervals') }}
    where {{ goodput_run_is_rebuilt() }}
        and elastic_badput_type is not null

),

elastic_spans as (

    {{ goodput_merged_spans('elastic_pairs') }}

),

productive_in_elastic as (

    -- located amounts are uniform over their span; a point amount counts where it lies
    select
        amounts.run_id,
        sum(
            case
                when amounts.end_epoch > amounts.start_epoch
                    then amounts.amount * {{ goodput_overlap_seconds('amounts', 'spans') }}
                        / (amounts.end_epoch - amounts.start_epoch)
                when amounts.start_epoch < spans.end_epoch then amounts.amount
                else 0
            end
        ) as productive_seconds
    from {{ ref('int_goodput__timeline_amounts') }} as amounts
    inner join elastic_spans as spans
        on spans.run_id = amounts.run_id
        and amounts.start_epoch <= spans.end_epoch
        and amounts.end_epoch >= spans.start_epoch
    where {{ goodput_run_is_rebuilt('amounts.run_id', keyed=true) }}
        and amounts.measure = 'PRODUCTIVE'
    group by amounts.run_id

),

unnamed_waits as (

    select
        run_id,
        sum(case when lower(interval_subtype) not like '%slice_down%' then duration_seconds else 0 end)
            as seconds
    from elastic_pairs
    where elastic_badput_type = 'ELASTIC_SLICE_DOWN'
    group by run_id

),

deviation as (

    select
        run_id,
        ideal_step_seconds,
        step_time_deviation_seconds,
        mean_deviation_seconds as mean_step_deviation_seconds
    from {{ ref('int_goodput__step_deviation') }}
    where {{ goodput_run_is_rebuilt() }}

),

validity as (

    select
        totals.*,
        case
            when totals.implausible_entries > 0
                then cast(totals.implausible_entries as {{ dbt.type_string() }})
                    || ' entries hold values no model can use (times outside 2000-2099, steps outside 0..2^53, '
                    || 'Orbax durations outside 0..10^7 s; see stg_goodput__events.implausible_reason): '
                    || 'the loader rejects them, a log sink passes them on'
            when totals.reused_name_starts > 0
                then 'the run name was reused: a job started more than goodput_stall_seconds after a job end, '
                    || 'with steps from 0 again, so two experiments would be merged (the library warns against '
                    || 'reusing a run name)'
            when totals.first_job_start_epoch is null then 'no job start recorded'
            when totals.first_job_start_epoch > totals.evaluated_at_epoch
                then 'not started at the evaluation time (build --as-of is before its first job start)'
            when totals.total_elapsed_seconds = 0 then 'total job time is zero'
            when totals.productive_seconds < 0 or totals.productive_seconds > totals.total_elapsed_seconds
                then 'productive time outside [0, total]'
        end as invalid_reason
    from totals

),

final as (

    select
        validity.run_id,
        validity.project_id,
        validity.run_name,
        {{ goodput_epoch_to_timestamp('validity.first_job_start_epoch') }} as first_job_start_at,
        {{ goodput_epoch_to_timestamp('validity.last_job_end_epoch') }} as last_job_end_at,
        validity.last_job_end_epoch is null as is_running,
        validity.is_stalled,
        validity.reused_name_starts > 0 as is_name_reused,
        {{ goodput_epoch_to_timestamp('validity.last_entry_epoch') }} as last_entry_at,
        validity.total_elapsed_seconds,
        validity.productive_seconds,
        case
            when validity.invalid_reason is null
                then validity.productive_seconds / validity.total_elapsed_seconds * 100
        end as goodput_pct,
        badput.badput_seconds,
        badput.other_seconds,
        validity.max_productive_step,
        validity.last_recorded_step,
        validity.disruptions,
        -- the library reports 0.0 where it has no step deviations (no step, or none of >= 1 s)
        coalesce(deviation.ideal_step_seconds, 0.0) as ideal_step_seconds,
        coalesce(deviation.step_time_deviation_seconds, 0.0) as step_time_deviation_seconds,
        deviation.mean_step_deviation_seconds,
        validity.is_elastic,
        slice_efficiency.stepping_slice_efficiency,
        slice_efficiency.available_slice_efficiency,
        slice_efficiency.stepping_slice_efficiency_observed,
        slice_efficiency.available_slice_efficiency_observed,
        case
            when validity.is_elastic
                then validity.productive_seconds - coalesce(productive_in_elastic.productive_seconds, 0)
        end as productive_seconds_net_of_elastic,
        case
            when validity.is_elastic and validity.invalid_reason is null
                then (validity.productive_seconds - coalesce(productive_in_elastic.productive_seconds, 0))
                    / validity.total_elapsed_seconds * 100
        end as goodput_pct_net_of_elastic,
        case when validity.is_elastic then coalesce(unnamed_waits.seconds, 0) end as elastic_slice_down_unnamed_seconds,
        validity.invalid_reason is null as is_valid,
        validity.invalid_reason,
        coalesce(badput.has_sanitized_badput, false) as has_sanitized_badput,
        validity.counted_entries,
        {{ goodput_epoch_to_timestamp('validity.evaluated_at_epoch') }} as evaluated_at,
        validity.first_job_start_epoch,
        validity.last_job_end_epoch,
        validity.evaluated_at_epoch
    from validity
    left join badput on badput.run_id = validity.run_id
    left join deviation on deviation.run_id = validity.run_id
    left join slice_efficiency on slice_efficiency.run_id = validity.run_id
    left join productive_in_elastic on productive_in_elastic.run_id = validity.run_id
    left join unnamed_waits on unnamed_waits.run_id = validity.run_id

)

select
    run_id,
    project_id,
    run_name,
    first_job_start_at,
    last_job_end_at,
    is_running,
    is_stalled,
    is_name_reused,
    last_entry_at,
    total_elapsed_seconds,
    productive_seconds,
    goodput_pct,
    badput_seconds,
    other_seconds,
    max_productive_step,
    last_recorded_step,
    disruptions,
    ideal_step_seconds,
    step_time_deviation_seconds,
    mean_step_deviation_seconds,
    is_elastic,
    stepping_slice_efficiency,
    available_slice_efficiency,
    stepping_slice_efficiency_observed,
    available_slice_efficiency_observed,
    productive_seconds_net_of_elastic,
    goodput_pct_net_of_elastic,
    elastic_slice_down_unnamed_seconds,
    is_valid,
    invalid_reason,
    has_sanitized_badput,
    counted_entries,
    evaluated_at,
    first_job_start_epoch,
    last_job_end_epoch,
    evaluated_at_epoch
from final
