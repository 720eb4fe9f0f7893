{{ config(**goodput_incremental_by_run('new_entries')) }}
{{ goodput_check_incremental_state() }}
{#
  Every counted entry with the segment (0 = first start, k = after the k-th
  restart) the library is in when it processes the entry.
#}

with

entries as (

    select * from {{ ref('int_goodput__entries_ordered') }}
    where {{ goodput_run_is_rebuilt() }}

),

restarts as (

    select * from {{ ref('int_goodput__segments') }}
    where {{ goodput_run_is_rebuilt() }}
        and segment_no > 0

),

marked as (

    select
        entries.*,
        restarts.segment_no as restart_segment_no
    from entries
    left join restarts
        on restarts.run_id = entries.run_id
        and restarts.segment_start_seq = entries.event_seq

),

segmented as (

    select
        marked.*,
        coalesce(
            max(restart_segment_no) over (
                partition by run_id order by event_seq rows between unbounded preceding and current row
            ),
            0
        ) as segment_no,
        restart_segment_no is not null as is_restart
    from marked

)

select * from segmented
{{ goodput_rows_by_run() }}
