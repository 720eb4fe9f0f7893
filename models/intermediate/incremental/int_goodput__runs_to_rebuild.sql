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
{%- set completed_build = goodput_completed_build() if watermark_us is not none else none -%}

with

landed as (

    select run_id, loaded_at
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

final as (

    select
        coalesce(new_entries.run_id, unfinished_build.run_id, unended.run_id) as run_id,
        new_entries.run_id is not null or coalesce(unfinished_build.has_new_entries, false) as has_new_entries,
        new_entries.loaded_through_us,
        {{ goodput_string_literal(invocation_id) }} as invocation_id
    from new_entries
    full outer join unfinished_build
        on unfinished_build.run_id = new_entries.run_id
    full outer join unended
        on unended.run_id = coalesce(new_entries.run_id, unfinished_build.run_id)

)

select * from final
