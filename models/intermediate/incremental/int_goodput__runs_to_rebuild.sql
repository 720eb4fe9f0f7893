{{ config(materialized='table') }}
{#
  One row per run this build recomputes (macros/incremental/rebuilt_runs.sql
  says how the per-run models use it):
  - has_new_entries: entries of the run landed after the build watermark
    (every run, in a build from scratch or with --full-refresh);
  - the other rows: runs without a job end at the last build, whose totals,
    OTHER and rolling grid follow the evaluation time.
  - and, when the last build did not complete (a model or test failed, or a
    --select left models out), every run that build set out to recompute:
    its watermark did not move, and on BigQuery a model that failed after its
    pre-hook delete lost those runs' rows.
  loaded_through_us is the latest loaded_at of the run's new entries (epoch
  microseconds): the largest becomes the next watermark once every per-run
  model has succeeded; invocation_id says which build listed the run.
  appends_after_seq (with appends_after_entry_at, appends_after_insert_id):
  the run's last entry in int_goodput__entries_ordered, when the last build
  completed and every new counted entry of the run sorts after it (or is
  stored already): the per-entry models then keep the run's rows and append
  the new entries'. Null: those models recompute the run whole (a new run, a
  late entry among the stored ones, a run the last build left unfinished,
  every run after an incomplete build that ran per-run models).
  appends_after_segment_no: that entry's segment in the stored
  int_goodput__entries_segmented, the final segment at the last build: the
  per-segment models keep the run's rows of the segments before it (null when
  that table is gone: they recompute the run whole).

  var('goodput_late_arrival_seconds') reaches that far behind the watermark,
  for sources whose loaded_at is not the order in which rows become visible
  (a log sink's receiveTimestamp, loads that overlap a build on BigQuery).
#}
{%- set watermark_us = none if flags.FULL_REFRESH else goodput_build_watermark() -%}
{%- set late_arrival_us = (var('goodput_late_arrival_seconds', 0) | int) * 1000000 -%}
{%- set previous_totals = adapter.get_relation(database=this.database, schema=this.schema,
                                               identifier='int_goodput__run_totals') if execute else none -%}
{%- set previous_runs = adapter.get_relation(database=this.database, schema=this.schema,
                                             identifier=this.identifier) if execute else none -%}
{%- set previous_entries = adapter.get_relation(database=this.database, schema=this.schema,
                                                identifier='int_goodput__entries_ordered') if execute else none -%}
{%- set previous_segmented = adapter.get_relation(database=this.database, schema=this.schema,
                                                  identifier='int_goodput__entries_segmented') if execute else none -%}
{%- set completed_build = goodput_completed_build() if watermark_us is not none else none -%}
{#- after an incomplete build that ran per-run models, their stored rows may disagree: none appends -#}
{%- set may_append = watermark_us is not none and previous_entries is not none
                     and not goodput_incomplete_build_since_complete() -%}
{#- the runs with new entries, inlined when few: reading their stored entries then prunes to them
    (BigQuery's clustering, DuckDB's row-group min/max) instead of reading every run's -#}
{#- and the earliest new counted entry: only stored entries from it on can be one of the new ones, so the
    check of new entries among the stored ones hashes those, not a long run's every stored entry (0.3 s
    at L); a second early, as the literal goes through a float -#}
{%- set stored_of_new_runs = 'true' -%}
{%- set segmented_of_new_runs = 'true' -%}
{%- set stored_from_earliest_new = 'true' -%}
{%- if may_append -%}
  {#- one read of the new entries for both: the earliest over every run, before the limit cuts the list -#}
  {%- set found = run_query("select run_id, min(earliest_us) over () as earliest_us from (select run_id, min("
                            ~ "case when is_counted then " ~ goodput_timestamp_to_epoch_us('entry_at') ~ " end)"
                            ~ " as earliest_us from " ~ ref('stg_goodput__events') ~ " where "
                            ~ goodput_loaded_after('loaded_at', watermark_us - late_arrival_us)
                            ~ " and run_id is not null group by run_id) as new_runs order by run_id limit 1001") -%}
  {%- set new_run_ids = found.columns[0].values() | list -%}
  {%- if new_run_ids | length <= 1000 -%}
    {%- set stored_of_new_runs = goodput_run_ids_among(new_run_ids, 'stored.run_id') -%}
    {%- set segmented_of_new_runs = goodput_run_ids_among(new_run_ids, 'segmented.run_id') -%}
  {%- endif -%}
  {%- set earliest = found.columns[1].values()[0] if new_run_ids else none -%}
  {%- if earliest is not none -%}
    {%- set stored_from_earliest_new = 'stored.entry_at >= '
        ~ goodput_epoch_to_timestamp(((earliest | int) - 1000000) ~ ' / 1000000.0') -%}
  {%- endif -%}
{%- endif -%}

with

landed as (

    select run_id, loaded_at, is_counted, entry_at, insert_id
    from {{ ref('stg_goodput__events') }}
    {%- if watermark_us is not none %}
    where {{ goodput_loaded_after('loaded_at', watermark_us - late_arrival_us) }}
    {%- endif %}

),

new_entries as (

    select run_id, max({{ goodput_timestamp_to_epoch_us('loaded_at') }}) as loaded_through_us
    from landed
    group by run_id

),

unended as (

    {%- if watermark_us is none %}
    -- no earlier build: every run has new entries
    select run_id from new_entries where false
    {%- elif previous_totals is not none %}
    select run_id from {{ previous_totals }}
    where last_job_end_epoch is null
    {%- else %}
    -- the totals of the last build are gone (dropped by hand): which runs had ended is unknown, so every run
    select distinct run_id from {{ ref('stg_goodput__events') }}
    {%- endif %}

),

unfinished_build as (

    {%- if previous_runs is not none and watermark_us is not none %}
    select run_id, has_new_entries
    from {{ previous_runs }}
    where invocation_id != {{ goodput_string_literal(completed_build or '') }}
    {%- else %}
    select run_id, true as has_new_entries from new_entries where false
    {%- endif %}

),

stored_last as (

    {%- if may_append %}
    {# each run's last entry as the last complete build numbered it, and its segment #}
    select
        stored.run_id,
        stored.event_seq,
        stored.entry_at,
        stored.insert_id,
        {{ 'segmented.segment_no' if previous_segmented is not none
           else 'cast(null as ' ~ dbt.type_bigint() ~ ')' }} as segment_no
    from {{ previous_entries }} as stored
    inner join (
        select stored.run_id, max(stored.event_seq) as event_seq
        from {{ previous_entries }} as stored
        inner join new_entries
            on new_entries.run_id = stored.run_id
        where {{ stored_of_new_runs }}
        group by stored.run_id
    ) as last_entry
        on last_entry.run_id = stored.run_id
        and last_entry.event_seq = stored.event_seq
    {%- if previous_segmented is not none %}
    left join {{ previous_segmented }} as segmented
        on segmented.run_id = stored.run_id
        and segmented.event_seq = stored.event_seq
        and {{ segmented_of_new_runs }}
    {%- endif %}
    where {{ stored_of_new_runs }}
    {%- else %}
    select
        run_id,
        cast(null as {{ dbt.type_bigint() }}) as event_seq,
        cast(null as {{ dbt.type_timestamp() }}) as entry_at,
        cast(null as {{ dbt.type_string() }}) as insert_id,
        cast(null as {{ dbt.type_bigint() }}) as segment_no
    from new_entries
    where false
    {%- endif %}

),

sorted_among_stored as (

    -- a new counted entry at or before the stored last one that is not stored: the run is renumbered
    select distinct landed.run_id
    from landed
    inner join stored_last
        on stored_last.run_id = landed.run_id
    where landed.is_counted
        and not {{ goodput_entry_sorts_after('landed.entry_at', 'landed.insert_id',
                                             'stored_last.entry_at', 'stored_last.insert_id') }}
        and not exists (
            select 1
            from {{ previous_entries if previous_entries is not none else 'stored_last' }} as stored
            where {{ stored_of_new_runs }}
                and {{ stored_from_earliest_new }}
                and stored.run_id = landed.run_id
                and stored.entry_at = landed.entry_at
                and stored.insert_id = landed.insert_id
        )

),

appended as (

    select stored_last.*
    from stored_last
    where stored_last.run_id not in (select run_id from sorted_among_stored)
        and stored_last.run_id not in (select run_id from unfinished_build)

),

final as (

    select
        coalesce(new_entries.run_id, unfinished_build.run_id, unended.run_id) as run_id,
        new_entries.run_id is not null or coalesce(unfinished_build.has_new_entries, false) as has_new_entries,
        new_entries.loaded_through_us,
        appended.event_seq as appends_after_seq,
        appended.entry_at as appends_after_entry_at,
        appended.insert_id as appends_after_insert_id,
        appended.segment_no as appends_after_segment_no,
        {{ goodput_string_literal(invocation_id) }} as invocation_id
    from new_entries
    full outer join unfinished_build
        on unfinished_build.run_id = new_entries.run_id
    full outer join unended
        on unended.run_id = coalesce(new_entries.run_id, unfinished_build.run_id)
    left join appended
        on appended.run_id = new_entries.run_id

)

select * from final
