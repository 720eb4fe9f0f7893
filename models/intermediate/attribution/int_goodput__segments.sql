{{ config(**goodput_incremental_by_run('new_entries', keeps_closed_segments_by='segment_no')) }}
{{ goodput_check_incremental_state() }}
{#
  Restart detection, set-based. The library keeps a dict of the steps seen since
  the last (re)start; a step entry whose step_count is already in it is a
  restart and starts a new segment. So entry i restarts iff the previous entry
  with the same step_count, p(i), is at or after the current segment's start.

  Given a segment start r, the next restart is f(r) = min{ i : p(i) >= r }: a
  suffix minimum over the candidates sorted by p, computed for every possible r
  with one window. The true restarts are the chain r0 = 0, f(r0), f(f(r0)), ...

  goodput_restart_chain follows it (macros/incremental/restart_chain.sql): by
  pointer doubling on DuckDB, candidates x log(restarts); a recursive CTE on
  BigQuery, which evaluates a CTE once per reference and so cannot double.

  A restart depends on the entries before it alone, and a segment's end on
  the entries from its start on: an appended run keeps the segments its last
  build had closed and follows the chain from the start of the one that was
  final then (r0 = that start), over the entries from there on. A candidate
  whose previous same step lies before that start cannot restart from it.
#}


with recursive

appended_runs as (

    select * from {{ goodput_appended_runs() }} as appended_runs

),

final_segments_before as (

    {#- an appended run's segment that was final at the last build, from the restart that closed
        the one before (kept: the pre-hook deleted the final segment's row) -#}
    {%- if goodput_builds_incrementally() %}
    select stored.run_id, stored.segment_no + 1 as segment_no, stored.segment_end_seq as segment_start_seq
    from {{ this }} as stored
    inner join appended_runs
        on appended_runs.run_id = stored.run_id
        and appended_runs.appends_after_segment_no = stored.segment_no + 1
    where {{ goodput_run_is_rebuilt('stored.run_id') }}
        and stored.segment_end_seq is not null
    {%- else %}
    select run_id, appends_after_segment_no as segment_no, appends_after_seq as segment_start_seq
    from appended_runs
    {%- endif %}

),

entries as (

    select entries.*
    from {{ ref('int_goodput__entries_ordered') }} as entries
    left join final_segments_before
        on final_segments_before.run_id = entries.run_id
    where {{ goodput_run_is_rebuilt('entries.run_id', keyed=true) }}
        and entries.event_seq >= coalesce(final_segments_before.segment_start_seq, 0)

),

steps as (

    select
        run_id,
        event_seq,
        step_count,
        lag(event_seq) over (
            partition by run_id, step_count order by event_seq
        ) as previous_same_step_seq
    from entries
    where step_start_epoch is not null

),

first_segments as (

    {#- where each run's chain starts: before every entry, or at an appended run's final segment before -#}
    select distinct
        steps.run_id,
        coalesce(final_segments_before.segment_no, 0) as segment_no,
        coalesce(final_segments_before.segment_start_seq, 0) as segment_start_seq
    from steps
    left join final_segments_before
        on final_segments_before.run_id = steps.run_id

),

repeated_steps as (

    select run_id, event_seq, previous_same_step_seq
    from steps
    where previous_same_step_seq is not null

),

lookup_points as (

    -- thresholds: candidate i is the next restart of every r <= p(i)
    select
        run_id,
        previous_same_step_seq as lookup_key,
        1 as point_order,
        event_seq as candidate_seq
    from repeated_steps

    union all

    -- queries: each candidate as a possible segment start
    select
        run_id,
        event_seq as lookup_key,
        0 as point_order,
        cast(null as {{ dbt.type_bigint() }}) as candidate_seq
    from repeated_steps

    union all

    -- the first segment followed
    select
        run_id,
        segment_start_seq as lookup_key,
        0 as point_order,
        cast(null as {{ dbt.type_bigint() }}) as candidate_seq
    from first_segments

),

next_restart as (

    select
        run_id,
        lookup_key as segment_start_seq,
        point_order,
        -- the suffix minimum taken from the end: the same rows, and on DuckDB a
        -- running frame is far cheaper than one that ends at unbounded following
        min(candidate_seq) over (
            partition by run_id
            order by lookup_key desc, point_order desc
            rows between unbounded preceding and current row
        ) as next_restart_seq
    from lookup_points

),

segment_starts as (

    select run_id, segment_start_seq, next_restart_seq
    from next_restart
    where point_order = 0

),

{{ goodput_restart_chain('segment_starts', 'first_segments', ref('int_goodput__entries_ordered')) }},

final as (

    select
        chain.run_id,
        chain.segment_no,
        chain.segment_start_seq,
        segment_starts.next_restart_seq as segment_end_seq
    from chain
    inner join segment_starts
        on segment_starts.run_id = chain.run_id
        and segment_starts.segment_start_seq = chain.segment_start_seq
    where {{ goodput_segment_is_rebuilt('chain.run_id', 'chain.segment_no') }}

)

select * from final
