{{ config(materialized='view', goodput_tested_runs='new_entries') }}
{#
  Step times for the ideal step time and step deviation, as the library's
  _get_step_times: consecutive step entries in entry order (across restarts)
  whose step_count goes up by one give step `previous`'s time; a step timed
  again after a restart keeps its first position but takes the latest time.
#}

with

steps as (

    select
        run_id,
        event_seq,
        step_count,
        step_start_epoch,
        lag(step_count) over by_run as previous_step,
        lag(step_start_epoch) over by_run as previous_start_epoch,
        lag(event_seq) over by_run as previous_seq
    from {{ ref('int_goodput__entries_ordered') }}
    where step_start_epoch is not null
    window by_run as (partition by run_id order by event_seq)

),

timed as (

    select
        run_id,
        event_seq,
        previous_seq,
        previous_step as step_count,
        step_start_epoch - previous_start_epoch as step_seconds
    from steps
    where step_count = previous_step + 1

),

latest as (

    select
        run_id,
        step_count,
        min(event_seq) as first_timed_seq,
        max_by(step_seconds, event_seq) as step_seconds,
        max_by(previous_seq, event_seq) as timed_from_seq
    from timed
    group by run_id, step_count

)

select * from latest
