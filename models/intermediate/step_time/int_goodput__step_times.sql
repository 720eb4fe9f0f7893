{{ config(materialized='view', goodput_tested_runs='new_entries') }}
{#
  Step times for the ideal step time and step deviation, as the library's
  _get_step_times: consecutive step entries in entry order (across restarts)
  whose step_count goes up by one give the first one's step its time
  (int_goodput__step_entries.step_seconds); a step timed again after a
  restart keeps its first position but takes the latest time.
  A view: a group-by over the stored step entries, filtered by run where read.
#}

with

timed_steps as (

    select
        run_id,
        step_count,
        event_seq,
        timed_by_seq,
        step_seconds
    from {{ ref('int_goodput__step_entries') }}
    where timed_by_seq is not null

),

latest as (

    select
        run_id,
        step_count,
        min(timed_by_seq) as first_timed_seq,
        max_by(step_seconds, event_seq) as step_seconds,
        max(event_seq) as timed_from_seq
    from timed_steps
    group by run_id, step_count

)

select * from latest
