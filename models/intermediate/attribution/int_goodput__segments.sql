{{ config(**goodput_incremental_by_run('new_entries')) }}
{{ goodput_check_incremental_state() }}
{#
  Restart detection, set-based. The library keeps a dict of the steps seen since
  the last (re)start; a step entry whose step_count is already in it is a
  restart and starts a new segment. So entry i restarts iff the previous entry
  with the same step_count, p(i), is at or after the current segment's start.

  Given a segment start r, the next restart is f(r) = min{ i : p(i) >= r }: a
  suffix minimum over the candidates sorted by p, computed for every possible r
  with one window. The true restarts are the chain r0 = 0, f(r0), f(f(r0)), ...

  The chain is followed by pointer doubling, not one join per restart (a
  recursive CTE re-reads every candidate at each step: restarts x candidates,
  40.8M rows for the 400 restarts of the L profile). Level k holds
  f^(2^k)(r) for every candidate r, one self-join from level k - 1; the chain's
  first 2^(k+1) segments are its first 2^k plus their images under f^(2^k).
  A run cannot restart more often than it repeats a step, so the levels are
  ceil(log2(most repeated step entries of a run + 1)), read before the build:
  candidates x log(restarts) in all.
#}

{%- set levels = goodput_doubling_levels(ref('int_goodput__entries_ordered')) %}

with

entries as (

    select * from {{ ref('int_goodput__entries_ordered') }}
    where {{ goodput_run_is_rebuilt() }}

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

    -- the first segment starts before every entry
    select distinct
        run_id,
        cast(0 as {{ dbt.type_bigint() }}) as lookup_key,
        0 as point_order,
        cast(null as {{ dbt.type_bigint() }}) as candidate_seq
    from steps

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

jumps_0 as (

    select run_id, segment_start_seq as from_seq, next_restart_seq as to_seq
    from segment_starts
    where next_restart_seq is not null

),

{%- for level in range(1, levels) %}

jumps_{{ level }} as (

    -- f^(2^{{ level }}) = f^(2^{{ level - 1 }}) twice
    select first_jump.run_id, first_jump.from_seq, second_jump.to_seq
    from jumps_{{ level - 1 }} as first_jump
    inner join jumps_{{ level - 1 }} as second_jump
        on second_jump.run_id = first_jump.run_id
        and second_jump.from_seq = first_jump.to_seq

),
{%- endfor %}

chain_0 as (

    select run_id, cast(0 as {{ dbt.type_bigint() }}) as segment_no, segment_start_seq
    from segment_starts
    where segment_start_seq = 0

),

{%- for level in range(levels) %}

chain_{{ level + 1 }} as (

    -- segments {{ 2 ** level }} .. {{ 2 ** (level + 1) - 1 }}: the first {{ 2 ** level }} moved on by f^({{ 2 ** level }})
    select run_id, segment_no, segment_start_seq from chain_{{ level }}
    union all
    select chain.run_id, chain.segment_no + {{ 2 ** level }}, jumps.to_seq
    from chain_{{ level }} as chain
    inner join jumps_{{ level }} as jumps
        on jumps.run_id = chain.run_id
        and jumps.from_seq = chain.segment_start_seq

),
{%- endfor %}

final as (

    select
        chain.run_id,
        chain.segment_no,
        chain.segment_start_seq,
        segment_starts.next_restart_seq as segment_end_seq
    from chain_{{ levels }} as chain
    inner join segment_starts
        on segment_starts.run_id = chain.run_id
        and segment_starts.segment_start_seq = chain.segment_start_seq

)

select * from final
