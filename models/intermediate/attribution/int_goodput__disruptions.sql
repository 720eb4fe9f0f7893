{{ config(**goodput_incremental_by_run('new_entries')) }}
{{ goodput_check_incremental_state() }}
{#
  One row per restart: the last step entry before it (the library's
  `_last_disrupted_step` and its start time), the step it resumes from, the job
  start that preceded it, and INFRASTRUCTURE_RECOVERY_FROM_DISRUPTION = that
  job start - the last step start (only when the job start is later).
#}

with

segments as (

    select * from {{ ref('int_goodput__segment_startup_and_wasted_progress') }}
    where {{ goodput_run_is_rebuilt() }}

),

entries as {{ goodput_cte_read_in_place() }} (

    select * from {{ ref('int_goodput__entries_segmented') }}
    where {{ goodput_run_is_rebuilt(keyed=true) }}

),

restart_points as (

    select
        current_segment.run_id,
        current_segment.segment_no,
        current_segment.segment_start_seq as restart_seq,
        previous_segment.last_entry_step as last_step_before,
        previous_segment.last_entry_start_epoch as last_step_start_epoch,
        previous_segment.wasted_seconds,
        previous_segment.max_step as max_step_before
    from segments as current_segment
    inner join segments as previous_segment
        on previous_segment.run_id = current_segment.run_id
        and previous_segment.segment_no = current_segment.segment_no - 1
    where current_segment.segment_no > 0

),

resumes as (

    select
        restart_points.*,
        resume_entry.step_count as resume_step,
        resume_entry.step_start_epoch as resume_start_epoch
    from restart_points
    inner join entries as resume_entry
        on resume_entry.run_id = restart_points.run_id
        and resume_entry.event_seq = restart_points.restart_seq

),

job_starts_before as (

    select
        resumes.run_id,
        resumes.segment_no,
        max_by(job_start.job_start_epoch, job_start.event_seq) as job_start_epoch
    from resumes
    inner join entries as job_start
        on job_start.run_id = resumes.run_id
        and job_start.job_start_epoch is not null
        and job_start.event_seq < resumes.restart_seq
    group by resumes.run_id, resumes.segment_no

),

final as (

    select
        resumes.run_id,
        resumes.segment_no as disruption_no,
        resumes.restart_seq,
        resumes.last_step_before,
        resumes.last_step_start_epoch,
        resumes.max_step_before,
        resumes.resume_step,
        resumes.resume_start_epoch,
        job_starts_before.job_start_epoch as restart_job_start_epoch,
        resumes.wasted_seconds,
        case
            when job_starts_before.job_start_epoch > resumes.last_step_start_epoch
                then job_starts_before.job_start_epoch - resumes.last_step_start_epoch
            else 0
        end as infrastructure_recovery_seconds
    from resumes
    left join job_starts_before
        on job_starts_before.run_id = resumes.run_id
        and job_starts_before.segment_no = resumes.segment_no

)

select * from final
