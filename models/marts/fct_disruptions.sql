{{ config(**goodput_incremental_by_run('new_entries')) }}
{{ goodput_check_incremental_state() }}
{#
  One row per restart the library detects: the last step before it, the step
  training resumed from, the progress wasted and the infrastructure recovery time.
#}

with

disruptions as (

    select * from {{ ref('int_goodput__disruptions') }}
    where {{ goodput_run_is_rebuilt() }}

),

runs as (

    select run_id, project_id, run_name from {{ ref('int_goodput__run_totals') }}
    where {{ goodput_run_is_rebuilt() }}

),

final as (

    select
        disruptions.run_id,
        runs.project_id,
        runs.run_name,
        disruptions.disruption_no,
        last_step_before,
        {{ goodput_epoch_to_timestamp('last_step_start_epoch') }} as last_step_start_at,
        max_step_before,
        resume_step,
        {{ goodput_epoch_to_timestamp('resume_start_epoch') }} as resumed_at,
        {{ goodput_epoch_to_timestamp('restart_job_start_epoch') }} as restart_job_start_at,
        wasted_seconds,
        infrastructure_recovery_seconds
    from disruptions
    inner join runs
        on runs.run_id = disruptions.run_id

)

select
    run_id,
    project_id,
    run_name,
    disruption_no,
    last_step_before,
    last_step_start_at,
    max_step_before,
    resume_step,
    resumed_at,
    restart_job_start_at,
    wasted_seconds,
    infrastructure_recovery_seconds
from final
