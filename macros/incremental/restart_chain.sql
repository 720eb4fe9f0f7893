{#
  goodput_restart_chain(segment_starts, first_segments, entries): the CTEs
  that follow every run's restart chain r0, f(r0), f(f(r0)), ... through
  segment_starts (run_id, segment_start_seq, next_restart_seq =
  f(segment_start_seq)), from first_segments (run_id, segment_no,
  segment_start_seq: r0 and its number, one row per run), ending in a CTE
  named chain (run_id, segment_no, segment_start_seq).

  DuckDB: pointer doubling. A recursive CTE re-reads every candidate at each
  step, restarts x candidates (40.8M rows for the 400 restarts of the L
  profile). Level k holds f^(2^k)(r) for every candidate r, one self-join of
  level k - 1; the chain's first 2^(k+1) segments are its first 2^k plus their
  images under f^(2^k). The levels cover the most segments a run of entries
  (int_goodput__entries_ordered) can have: candidates x log(restarts) in all, DuckDB
  computing each level once.

  BigQuery evaluates a non-recursive CTE once per reference, so each level's
  two references to the one below would double the work at every level: it
  follows the chain with a recursive CTE (one join per restart; BigQuery
  stops a recursion after 500 iterations unless its limit is raised).
#}

{% macro goodput_restart_chain(segment_starts, first_segments, entries) -%}
  {{ return(adapter.dispatch('goodput_restart_chain', 'goodput_warehouse')(segment_starts, first_segments, entries)) }}
{%- endmacro %}

{% macro default__goodput_restart_chain(segment_starts, first_segments, entries) -%}
{%- set levels = goodput_doubling_levels(entries) -%}
jumps_0 as (

    select run_id, segment_start_seq as from_seq, next_restart_seq as to_seq
    from {{ segment_starts }}
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

    select run_id, segment_no, segment_start_seq
    from {{ first_segments }}

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

chain as (

    select * from chain_{{ levels }}

)
{%- endmacro %}

{% macro bigquery__goodput_restart_chain(segment_starts, first_segments, entries) -%}
chain as (

    select
        first_segments.run_id,
        first_segments.segment_no,
        segment_starts.segment_start_seq,
        segment_starts.next_restart_seq
    from {{ first_segments }} as first_segments
    inner join {{ segment_starts }} as segment_starts
        on segment_starts.run_id = first_segments.run_id
        and segment_starts.segment_start_seq = first_segments.segment_start_seq

    union all

    select
        chain.run_id,
        chain.segment_no + 1 as segment_no,
        segment_starts.segment_start_seq,
        segment_starts.next_restart_seq
    from chain
    inner join {{ segment_starts }} as segment_starts
        on segment_starts.run_id = chain.run_id
        and segment_starts.segment_start_seq = chain.next_restart_seq

)
{%- endmacro %}


{#-
  Levels of pointer doubling that follow every run's restart chain
  (int_goodput__segments): enough for 2^levels segments, where a run cannot
  have more segments than repeated step entries plus one. Read from the
  ordered entries of the runs this build recomputes (12 at parse time and in
  unit tests).
-#}
{% macro goodput_doubling_levels(entries) -%}
  {%- if not execute or model.resource_type == 'unit_test' -%}{{ return(12) }}{%- endif -%}
  {%- set found = run_query(
      "select coalesce(max(repeats), 0) from (select run_id, count(*) - count(distinct step_count) as repeats from "
      ~ entries ~ " where step_start_epoch is not null and " ~ goodput_run_is_rebuilt() ~ " group by run_id) as runs") -%}
  {%- set repeats = found.rows[0][0] | int -%}
  {%- set levels = namespace(n=1) -%}
  {%- for _ in range(64) if 2 ** levels.n <= repeats + 1 -%}{%- set levels.n = levels.n + 1 -%}{%- endfor -%}
  {{ return(levels.n) }}
{%- endmacro %}
