{{ config(**goodput_incremental_by_run('evaluated')) }}
{{ goodput_check_incremental_state() }}
{#
  One row per (run, Badput type, custom event type or null): seconds and share
  of the total elapsed time, as get_job_goodput(include_badput_breakdown=True)
  reports them (a share is 0 unless 0 < seconds < total).
#}

with

buckets as (

    select * from {{ ref('int_goodput__badput_buckets') }}
    where {{ goodput_run_is_rebuilt() }}

),

runs as (

    select run_id, project_id, run_name from {{ ref('int_goodput__run_totals') }}
    where {{ goodput_run_is_rebuilt() }}

),

final as (

    select
        buckets.run_id,
        runs.project_id,
        runs.run_name,
        buckets.badput_type,
        buckets.custom_badput_event_type,
        buckets.badput_seconds,
        {{ goodput_badput_share('buckets.badput_seconds', 'buckets.total_elapsed_seconds') }} as badput_pct,
        buckets.raw_seconds,
        buckets.was_sanitized,
        buckets.badput_type_id,
        buckets.counts_against_goodput,
        buckets.exported_to_gcm,
        buckets.is_in_library_breakdown,
        buckets.gcm_badput_source
    from buckets
    inner join runs
        on runs.run_id = buckets.run_id

)

select
    run_id,
    project_id,
    run_name,
    badput_type,
    custom_badput_event_type,
    badput_seconds,
    badput_pct,
    raw_seconds,
    was_sanitized,
    badput_type_id,
    counts_against_goodput,
    exported_to_gcm,
    is_in_library_breakdown,
    gcm_badput_source
from final
