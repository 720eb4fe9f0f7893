{#
  Incremental by run: a build recomputes only the runs whose numbers can have
  changed since the last build, and leaves every other run's rows untouched.

  int_goodput__runs_to_rebuild (built first) lists them:
  - runs with entries landed after the build watermark (has_new_entries): the
    watermark is the latest loaded_at of the last complete build, in which
    every per-run model succeeded and no test failed (goodput_build_watermark,
    advanced at on-run-end). A late entry of a finished run (a late Orbax
    record) makes that run dirty again.
  - runs without a job end: their total, OTHER and rolling grid run to the
    evaluation time, so every build moves them (running and stalled alike).
  - the runs of a last build that did not complete, all over again.

  Every per-run model declares which of the two moves it (rebuilt_when):
  - 'new_entries': it reads only what the entries say (ordering, segments,
    steps, intervals, located amounts), so an unended run without new entries
    keeps its rows;
  - 'evaluated': it reads the evaluation time, directly or through
    int_goodput__run_totals' total (totals, buckets, curves, rolling, marts).

  A model's import CTEs filter on goodput_run_is_rebuilt(), its pre-hook
  deletes the same runs, and it appends what it computed. On DuckDB the hook,
  the select and the insert are one transaction; on BigQuery a failure between
  them leaves those runs out of the table until the next build, which
  recomputes them (that build did not complete, and report and push refuse
  the marts of a failed build meanwhile).

  The per-entry models (int_goodput__entries_ordered, _segmented, and the
  start/end pairs of int_goodput__paired_intervals, each stored with its end
  entry) go further for a run whose new entries all sort after its stored
  last entry (runs_to_rebuild.appends_after_seq, set only after a complete
  build): what they store for an entry depends on the entries before it
  alone, so they keep the run's rows and append the new entries' (config
  goodput_appends_by).
  A late entry that sorts among the stored ones renumbers the run whole.
#}

{#- An incremental build of the current model (never in a unit test, which has no table). -#}
{% macro goodput_builds_incrementally() -%}
  {{ return(execute and this is not none and is_incremental()) }}
{%- endmacro %}


{#- config() arguments of a per-run incremental model. -#}
{#-
  appends_by: for a model whose rows, each of one entry, depend on the
  entries before theirs alone, the column holding that entry's event_seq
  (event_seq itself, or a pair's end entry: end_seq).
  keeps_closed_segments_by: the segment column of a model whose rows of a
  segment depend on that segment's entries and the entry that closes it alone
  (goodput_segment_is_rebuilt).
  reopened_by (with keeps_closed_segments_by): {model, key, entry} for a
  model whose row of a closed segment also depends on another model's rows
  under the same key (model.key), each of an entry (model.entry): such a row
  is recomputed when that model holds one of an appended entry (after the
  run's stored last entry) under its key. column: the model's own column
  holding that key, when it is not named key too.
  always_rebuilt_by (with keeps_closed_segments_by): a boolean column, true
  on the rows that depend on more than their segment and key (an average over
  the run, a segment's total): those of a closed segment are recomputed too.
  replaces_tails_by: a column that orders a run's rows (an offset on its
  time axis), for a model whose select may recompute an appended run from a
  point on and keep its stored rows before it (macros/incremental/run_tails.sql).
  keyed: the model ends with goodput_select_keyed_by_run(): on DuckDB its rows
  carry run_key, in its order, and its hooks delete by it too
  (macros/cross_db/run_key.sql).
-#}
{% macro goodput_incremental_by_run(rebuilt_when, cluster_by=['run_id'], partition_by=none, appends_by=none,
                                    keeps_closed_segments_by=none, reopened_by=none, always_rebuilt_by=none,
                                    replaces_tails_by=none, keyed=false) -%}
  {%- if rebuilt_when not in ('new_entries', 'evaluated') -%}
    {{ exceptions.raise_compiler_error("goodput_incremental_by_run: rebuilt_when is " ~ rebuilt_when
                                       ~ "; expected new_entries or evaluated") }}
  {%- endif -%}
  {%- if appends_by is not none and rebuilt_when != 'new_entries' -%}
    {{ exceptions.raise_compiler_error("goodput_incremental_by_run: only a model rebuilt for new entries can append them") }}
  {%- endif -%}
  {%- if keeps_closed_segments_by is not none and (appends_by is not none or rebuilt_when != 'new_entries') -%}
    {{ exceptions.raise_compiler_error("goodput_incremental_by_run: keeps_closed_segments_by is for models rebuilt for "
                                       ~ "new entries, and keyed by segment rather than appended by entry") }}
  {%- endif -%}
  {%- if reopened_by is not none and (keeps_closed_segments_by is none
                                      or (reopened_by.keys() | sort | list) not in (['entry', 'key', 'model'],
                                                                               ['column', 'entry', 'key', 'model'])) -%}
    {{ exceptions.raise_compiler_error("goodput_incremental_by_run: reopened_by is {model, key, entry[, column]}, "
                                       ~ "for a model configured with keeps_closed_segments_by") }}
  {%- endif -%}
  {%- if always_rebuilt_by is not none and keeps_closed_segments_by is none -%}
    {{ exceptions.raise_compiler_error("goodput_incremental_by_run: always_rebuilt_by is for a model configured with "
                                       ~ "keeps_closed_segments_by") }}
  {%- endif -%}
  {%- if replaces_tails_by is not none and rebuilt_when != 'evaluated' -%}
    {{ exceptions.raise_compiler_error("goodput_incremental_by_run: replaces_tails_by is for models rebuilt when evaluated") }}
  {%- endif -%}
  {%- set tails_strategy = goodput_run_tails_strategy() if replaces_tails_by is not none else none -%}
  {{ return({
      'materialized': 'incremental',
      'incremental_strategy': tails_strategy or goodput_append_strategy(),
      'goodput_replaces_tails_by': replaces_tails_by if tails_strategy else none,
      'goodput_run_keyed': keyed,
      'cluster_by': goodput_cluster_by(cluster_by),
      'partition_by': partition_by,
      'on_schema_change': 'fail',
      'goodput_rebuilt_when': rebuilt_when,
      'goodput_appends_by': appends_by,
      'goodput_keeps_closed_segments_by': keeps_closed_segments_by,
      'goodput_reopened_by': reopened_by,
      'goodput_always_rebuilt_by': always_rebuilt_by,
      'pre_hook': ["{{ goodput_forget_rebuilt_runs() }}"],
      'post_hook': goodput_incremental_state_hooks(),
  }) }}
{%- endmacro %}


{#-
  A predicate on column (a run_id) that keeps the runs this build recomputes
  for the current model: true in a full build. The run ids are inlined when
  there are few (DuckDB then filters right at the scan, before a view parses
  any payload), otherwise read from int_goodput__runs_to_rebuild.
  name_column: a column holding the run name as landed (staging's run_name).
  run_id is computed (project || '/' || name), so a filter on it alone reads
  and concatenates every landed row; the run names also filter the stored
  column, where the scan skips the row groups of other runs (staging over 200
  runs: 0.6 s -> 0.08 s).
  part (models configured with appends_by only): 'whole' keeps the runs
  recomputed whole, 'appended' those whose new entries are appended.
  keyed: column's relation is a keyed model (goodput_select_keyed_by_run), so
  the filter also lists the runs' keys in the run_key beside column, which
  DuckDB's scan prunes row groups by (a binder error if it has none).
-#}
{% macro goodput_run_is_rebuilt(column='run_id', name_column=none, part=none, keyed=false) -%}
  {#- a unit test gives only the model's inputs, and builds from scratch -#}
  {%- if model.resource_type == 'unit_test' -%}{{ return('false' if part == 'appended' else 'true') }}{%- endif -%}
  {%- set runs_to_rebuild = ref('int_goodput__runs_to_rebuild') -%}
  {%- if not goodput_builds_incrementally() -%}
    {{ 'false' if part == 'appended' else 'true' }}
  {%- else -%}
    {{ goodput_rebuilt_runs_predicate(column, runs_to_rebuild, config.get('goodput_rebuilt_when'), name_column, part,
                                      goodput_key_column(column) if keyed else none) }}
  {%- endif -%}
{%- endmacro %}

{#- The run_key column beside a run_id column ('stored.run_id' -> 'stored.run_key'). -#}
{% macro goodput_key_column(column) -%}
  {%- if not column.endswith('run_id') -%}
    {{ exceptions.raise_compiler_error("goodput_key_column: " ~ column ~ " is not a run_id column") }}
  {%- endif -%}
  {{ return(column[:-6] ~ 'run_key') }}
{%- endmacro %}

{% macro goodput_rebuilt_runs_predicate(column, runs_to_rebuild, rebuilt_when, name_column=none, part=none,
                                        key_column=none) -%}
  {%- if rebuilt_when not in ('new_entries', 'evaluated') -%}
    {{ exceptions.raise_compiler_error(this.identifier ~ " filters on the runs to rebuild but declares no "
        ~ "goodput_rebuilt_when: configure it with goodput_incremental_by_run()") }}
  {%- endif -%}
  {%- if part is not none and (part not in ('whole', 'appended') or not config.get('goodput_appends_by')) -%}
    {{ exceptions.raise_compiler_error(this.identifier ~ " asks for the runs to rebuild " ~ part
        ~ ": only a model configured with goodput_incremental_by_run(..., appends_by=<column>) can, as 'whole' or 'appended'") }}
  {%- endif -%}
  {%- set which = goodput_rebuilt_runs_where(rebuilt_when, part) -%}
  {%- set listed = goodput_listed_rebuilt_runs(runs_to_rebuild, which) -%}
  {%- set ids = listed.run_ids -%}
  {%- if ids | length <= 1000 -%}
    {%- set keys = goodput_run_keys_among(listed.run_keys, key_column) -%}
    {%- set among = goodput_run_ids_among(ids, column, name_column) -%}
    {{ '(' ~ keys ~ among ~ ')' if keys else among }}
  {%- else -%}
    {{ column }} in (select run_id from {{ runs_to_rebuild }} {{ which }})
  {%- endif -%}
{%- endmacro %}


{#-
  A predicate on a row's run and segment for a model configured with
  goodput_incremental_by_run(..., keeps_closed_segments_by=...), in place of
  goodput_run_is_rebuilt(), which it includes: true for every segment of a
  run recomputed whole, and for an appended run's segments from its final one
  at the last build on (appends_after_segment_no: read at compile time, the
  cut of each of up to 16 appended runs is a literal, goodput_value_by_run;
  a subquery past that). What such a model stores
  for a segment depends on that segment's entries and on the entry that
  closes it alone, and the new entries of an appended run follow its stored
  ones: the segments the last build had closed keep their rows.
  key_column (models configured with reopened_by): the row's key, whose row
  of a closed segment is true too when the reopening model holds a row of an
  appended entry under it. Keys are matched across the appended runs, not
  within the row's own run: a few closed rows of another appended run whose
  key is the same number are recomputed too, as the pre-hook and the select
  ask the same. Matched within the run, the correlated subquery cost 0.4 s
  for every million rows it filtered (DuckDB joins each distinct run and
  key); uncorrelated, it is a hash join against a few hundred keys.
  always_column (models configured with always_rebuilt_by): the row's flag,
  true for a row recomputed with its run in any segment. The pre-hook and the
  model's final filter pass it; filters on the model's inputs, which lack the
  flag, leave it out, so the rows it flags must be computed from inputs read
  whole.
-#}
{#- columns qualified by their relation's alias: the subqueries have a run_id of their own -#}
{% macro goodput_segment_is_rebuilt(column, segment_column, key_column=none, always_column=none, keyed=false) -%}
  {%- set reopened_by = config.get('goodput_reopened_by') -%}
  {#- a unit test's config lacks the model's -#}
  {%- if execute and model.resource_type != 'unit_test' and not config.get('goodput_keeps_closed_segments_by') -%}
    {{ exceptions.raise_compiler_error(this.identifier ~ " filters on the segments to rebuild: configure it with "
        ~ "goodput_incremental_by_run(..., keeps_closed_segments_by=<its segment column>)") }}
  {%- endif -%}
  {%- if execute and reopened_by and key_column is none -%}
    {{ exceptions.raise_compiler_error(this.identifier ~ " is reopened by " ~ reopened_by.model
        ~ ": goodput_segment_is_rebuilt needs its key column (" ~ reopened_by.key ~ ")") }}
  {%- endif -%}
  {#- called first, in every case: at parse time it declares the ref to runs_to_rebuild -#}
  {%- set run_is_rebuilt = goodput_run_is_rebuilt(column, keyed=keyed) -%}
  {#- config is empty at parse time, so the reopening model must be a ref of the model's own SQL; resolved in
      every build (not only incremental ones), a model that lacks it fails its first build with dbt's
      depends_on hint rather than its first appended one -#}
  {%- set reopening_model = ref(reopened_by.model) if reopened_by else none -%}
  {%- if model.resource_type == 'unit_test' or not goodput_builds_incrementally() -%}
    true
  {%- else -%}
    {%- set listed = goodput_listed_rebuilt_runs(ref('int_goodput__runs_to_rebuild'),
                                                 goodput_rebuilt_runs_where(config.get('goodput_rebuilt_when'))) -%}
    {%- set cut = goodput_value_by_run(column, listed.segment_cuts, 0) %}
    {{ run_is_rebuilt }}
    and ({{ segment_column }} >= {{ cut if cut is not none else "coalesce((
            select appended.appends_after_segment_no
            from " ~ ref('int_goodput__runs_to_rebuild') ~ " as appended
            where appended.run_id = " ~ column ~ "
                and appended.appends_after_seq is not null
        ), 0)" }}
      {%- if reopened_by %}
        or {{ key_column }} in (
            select reopening.{{ reopened_by.key }}
            from {{ reopening_model }} as reopening
            inner join {{ ref('int_goodput__runs_to_rebuild') }} as appended
                on appended.run_id = reopening.run_id
            where reopening.{{ reopened_by.entry }} > appended.appends_after_seq
        )
      {%- endif %}
      {%- if always_column is not none %}
        or {{ always_column }}
      {%- endif %})
  {%- endif -%}
{%- endmacro %}


{#- The where clause over int_goodput__runs_to_rebuild of a model's runs to rebuild (or part of them). -#}
{% macro goodput_rebuilt_runs_where(rebuilt_when=none, part=none) -%}
  {{ return({
      none: "where has_new_entries" if rebuilt_when == 'new_entries' else "",
      'whole': "where has_new_entries and appends_after_seq is null",
      'appended': "where appends_after_seq is not null",
  }[part]) }}
{%- endmacro %}


{#-
  The runs of runs_to_rebuild that match which (a where clause), read once per
  model (its import CTEs and hooks each ask: one query, not one per CTE, a job
  each on BigQuery): {run_ids: up to 1001, run_keys: their goodput_run_key
  where the warehouse stores one, first_appends_after_us: the earliest
  appends_after_entry_at among them, epoch microseconds, or none,
  appends_after_seqs and segment_cuts: run_id -> appends_after_seq and
  appends_after_segment_no of those of them that append (goodput_value_by_run),
  none when the list stops at 1001 runs and so may miss some}.
-#}
{% macro goodput_listed_rebuilt_runs(runs_to_rebuild, which) -%}
  {%- set cache_key = '_goodput_rebuilt_runs ' ~ runs_to_rebuild ~ ' ' ~ which -%}
  {%- if model.get(cache_key) is none -%}
    {%- set key = goodput_run_key('run_id') -%}
    {%- set found = run_query(
        "select run_id, min(" ~ goodput_timestamp_to_epoch_us('appends_after_entry_at') ~ ") over () as first_appends_after_us"
        ~ ", appends_after_seq, case when appends_after_seq is not null then appends_after_segment_no end"
        ~ (", " ~ key ~ " as run_key" if key is not none else "")
        ~ " from " ~ runs_to_rebuild ~ " " ~ which ~ " order by run_id limit 1001") -%}
    {%- set appends_after_seqs = {} -%}
    {%- set segment_cuts = {} -%}
    {%- for row in found.rows -%}
      {%- if row[2] is not none -%}{%- do appends_after_seqs.update({row[0]: row[2]}) -%}{%- endif -%}
      {%- if row[3] is not none -%}{%- do segment_cuts.update({row[0]: row[3]}) -%}{%- endif -%}
    {%- endfor -%}
    {%- do model.update({cache_key: {
        'run_ids': found.columns[0].values() | list,
        'run_keys': (found.columns[4].values() | list) if key is not none else [],
        'first_appends_after_us': found.rows[0][1] if found.rows | length > 0 else none,
        'appends_after_seqs': appends_after_seqs if found.rows | length <= 1000 else none,
        'segment_cuts': segment_cuts if found.rows | length <= 1000 else none,
    }}) -%}
  {%- endif -%}
  {{ return(model.get(cache_key)) }}
{%- endmacro %}


{#-
  A per-run number read at compile time (values: run_id -> number, from
  goodput_listed_rebuilt_runs) as an expression of column: `case column when
  <run> then <value> ... else <default> end`, or the default alone; none when
  there are more than 16 values or values is none (the runs were too many to
  list), for the caller's correlated subquery.
  DuckDB runs a correlated scalar subquery as a join against every distinct
  run of its input (a delim join), where the literal costs a comparison per
  row: at L's hourly build the located amounts' select 0.38 -> 0.29 s, the
  step intervals' 0.17 -> 0.07 s. Past a few runs each row would compare its
  run_id with every one of them, so a long list keeps the subquery.
-#}
{% macro goodput_value_by_run(column, values, default) -%}
  {%- if values is none -%}{{ return(none) }}{%- endif -%}
  {%- if values | length == 0 -%}{{ return(default | string) }}{%- endif -%}
  {%- if values | length > 16 -%}{{ return(none) }}{%- endif -%}
  {%- set cases = [] -%}
  {%- for run_id, value in values | dictsort -%}
    {%- do cases.append('when ' ~ goodput_string_literal(run_id) ~ ' then ' ~ value) -%}
  {%- endfor -%}
  {{ return('case ' ~ column ~ ' ' ~ cases | join(' ') ~ ' else ' ~ default ~ ' end') }}
{%- endmacro %}

{#-
  column (a run_id) is one of run_ids (a list read at compile time), as
  literals the scan can prune by (goodput_in_list); false for no run. With
  name_column, the run names filter that stored column too
  (goodput_run_names_among).
-#}
{% macro goodput_run_ids_among(run_ids, column, name_column=none) -%}
  {%- if run_ids | length == 0 -%}{{ return('false') }}{%- endif -%}
  {%- set literals = [] -%}
  {%- for run_id in run_ids -%}{%- do literals.append(goodput_string_literal(run_id)) -%}{%- endfor -%}
  {{ return(goodput_run_names_among(run_ids, name_column) ~ goodput_in_list(column, literals)) }}
{%- endmacro %}


{#-
  "(name_column is null or name_column in (<the runs' names>)) and ", or ''
  without a name column: a superset of the runs (a name can be in two
  projects) that the scan can apply to a stored column.
-#}
{% macro goodput_run_names_among(run_ids, name_column) -%}
  {%- if name_column is none -%}{{ return('') }}{%- endif -%}
  {%- set names = [] -%}
  {%- for run_id in run_ids if run_id is not none -%}
    {%- set parts = run_id.split('/', 1) -%}
    {%- if parts | length < 2 -%}{{ return('') }}{%- endif -%}
    {%- do names.append(goodput_string_literal(parts[1])) -%}
  {%- endfor -%}
  {%- if not names -%}{{ return('') }}{%- endif -%}
  {{ return('(' ~ name_column ~ ' is null or ' ~ goodput_in_list(name_column, names | unique | list) ~ ') and ') }}
{%- endmacro %}


{#-
  pre_hook: the rows of the runs this build recomputes go (in the same
  transaction on DuckDB). A model that appends keeps an appended run's rows up
  to its stored last entry (after a complete build there are no others): the
  rows whose entry (goodput_appends_by) is at or before it.
-#}
{% macro goodput_forget_rebuilt_runs() -%}
  {%- set keyed = config.get('goodput_run_keyed', false) -%}
  {%- if goodput_builds_incrementally() and config.get('goodput_keeps_closed_segments_by') -%}
    {%- set reopened_by = config.get('goodput_reopened_by') -%}
    {%- set always_rebuilt_by = config.get('goodput_always_rebuilt_by') -%}
    delete from {{ this }} as stored
    where {{ goodput_segment_is_rebuilt('stored.run_id', 'stored.' ~ config.get('goodput_keeps_closed_segments_by'),
                                        'stored.' ~ reopened_by.get('column', reopened_by.key) if reopened_by else none,
                                        'stored.' ~ always_rebuilt_by if always_rebuilt_by else none,
                                        keyed=keyed) }}
  {%- elif goodput_builds_incrementally() and config.get('goodput_appends_by') -%}
    delete from {{ this }} as stored
    where {{ goodput_run_is_rebuilt('stored.run_id', part='whole', keyed=keyed) }}
        {%- set appended = goodput_listed_rebuilt_runs(ref('int_goodput__runs_to_rebuild'),
                                                       goodput_rebuilt_runs_where(part='appended')) %}
        {%- set seq = goodput_value_by_run('stored.run_id', appended.appends_after_seqs, 'null') %}
        or ({{ goodput_run_is_rebuilt('stored.run_id', part='appended', keyed=keyed) }}
            and stored.{{ config.get('goodput_appends_by') }} > {{ seq if seq is not none else "(
                select appended.appends_after_seq
                from " ~ ref('int_goodput__runs_to_rebuild') ~ " as appended
                where appended.run_id = stored.run_id
            )" }})
  {%- elif goodput_replaces_run_tails() -%}
    {#- an appended run's rows go in the strategy, from where the select recomputed it -#}
    delete from {{ this }}
    where {{ goodput_run_is_rebuilt('run_id', keyed=keyed) }}
        and run_id not in (select run_id from {{ goodput_appended_runs() }} as appended_runs)
  {%- elif goodput_builds_incrementally() -%}
    delete from {{ this }} where {{ goodput_run_is_rebuilt('run_id', keyed=keyed) }}
  {%- else -%}
    select 1 as nothing_to_forget
  {%- endif -%}
{%- endmacro %}


{#-
  The runs whose new entries this build appends (for the models that keep
  an appended run's rows): run_id, appends_after_seq (the event_seq of the
  run's stored last entry), that entry's appends_after_entry_at,
  appends_after_insert_id and appends_after_segment_no (its segment; null if
  unknown). Empty in a build from scratch and in unit tests.
-#}
{% macro goodput_appended_runs() -%}
  {%- if model.resource_type != 'unit_test' and goodput_builds_incrementally() -%}
    (
        select run_id, appends_after_seq, appends_after_entry_at, appends_after_insert_id, appends_after_segment_no
        from {{ ref('int_goodput__runs_to_rebuild') }}
        where appends_after_seq is not null
    )
  {%- else -%}
    (
        select
            cast(null as {{ dbt.type_string() }}) as run_id,
            cast(null as {{ dbt.type_bigint() }}) as appends_after_seq,
            cast(null as {{ dbt.type_timestamp() }}) as appends_after_entry_at,
            cast(null as {{ dbt.type_string() }}) as appends_after_insert_id,
            cast(null as {{ dbt.type_bigint() }}) as appends_after_segment_no
        limit 0
    )
  {%- endif -%}
{%- endmacro %}

{#-
  An entry (entry_at, insert_id) sorts after another (after_entry_at,
  after_insert_id) in the library's processing order; a null in either
  compares as not after.
-#}
{% macro goodput_entry_sorts_after(entry_at, insert_id, after_entry_at, after_insert_id) -%}
  coalesce(
      {{ entry_at }} > {{ after_entry_at }}
      or ({{ entry_at }} = {{ after_entry_at }} and {{ insert_id }} > {{ after_insert_id }}),
      false
  )
{%- endmacro %}

{#-
  A predicate on entry_at, a bound the scan can apply (row groups of older
  entries are skipped before staging parses a payload): at or after the
  earliest stored last entry of the appended runs. The exact cut is the join
  on goodput_appended_runs().
-#}
{% macro goodput_at_or_after_appended_runs(column) -%}
  {%- if model.resource_type == 'unit_test' or not goodput_builds_incrementally() -%}{{ return('false') }}{%- endif -%}
  {#- the same query as goodput_run_is_rebuilt(part='appended') -#}
  {%- set earliest_us = goodput_listed_rebuilt_runs(ref('int_goodput__runs_to_rebuild'),
                                                    goodput_rebuilt_runs_where(part='appended')).first_appends_after_us -%}
  {%- if earliest_us is none -%}
    false
  {%- else -%}
    {#- a second early: a bound to prune by, never the cut -#}
    {{ column }} >= {{ goodput_epoch_to_timestamp(((earliest_us | int) - 1000000) ~ " / 1000000.0") }}
  {%- endif -%}
{%- endmacro %}


{#-
  Append what a model computed: the pre-hook already removed the runs it
  replaces. DuckDB appends; BigQuery's merge without a unique key inserts
  every row (dbt's merge on false).
-#}
{% macro goodput_append_strategy() -%}
  {{ return(adapter.dispatch('goodput_append_strategy', 'goodput_warehouse')()) }}
{%- endmacro %}

{% macro default__goodput_append_strategy() -%}
  {{ return('append') }}
{%- endmacro %}

{% macro bigquery__goodput_append_strategy() -%}
  {{ return('merge') }}
{%- endmacro %}


{#-
  The build watermark: latest loaded_at that every per-run model has taken
  in, or none before the first complete build.
-#}
{% macro goodput_build_watermark_relation() -%}
  {{ return(api.Relation.create(database=target.database, schema=target.schema,
                                identifier='goodput_build_watermark')) }}
{%- endmacro %}

{% macro goodput_build_watermark() -%}
  {{ return(goodput_bookkeeping_value(goodput_build_watermark_relation(), 'max(loaded_through_us)')) }}
{%- endmacro %}


{#-
  expression (an aggregate) over one of the build's bookkeeping tables
  (goodput_build_watermark, goodput_incomplete_builds), or none while the
  table does not exist: before the first build that writes it, and at parse
  time. dbt's relation cache answers whether it exists without a query.
-#}
{% macro goodput_bookkeeping_value(relation, expression) -%}
  {%- if not execute -%}{{ return(none) }}{%- endif -%}
  {%- set stored = adapter.get_relation(database=relation.database, schema=relation.schema,
                                        identifier=relation.identifier) -%}
  {%- if stored is none -%}{{ return(none) }}{%- endif -%}
  {%- set found = run_query("select " ~ expression ~ " from " ~ stored) -%}
  {{ return(found.rows[0][0] if found.rows | length > 0 else none) }}
{%- endmacro %}


{#- loaded_at after the watermark (epoch microseconds), as a predicate the scan can use. -#}
{% macro goodput_loaded_after(column, watermark_us) -%}
  {{ column }} > {{ goodput_epoch_to_timestamp((watermark_us | int) ~ " / 1000000.0") }}
{%- endmacro %}


{#-
  on-run-end: record that this build completed, with the watermark moved to
  what its runs_to_rebuild saw, but only when every per-run model of the
  project was built and succeeded in this invocation and no test failed.
  Otherwise the watermark and the completed build stay the last complete
  one's, and the next build recomputes (and tests again) everything this one
  set out to: the runs with entries since that watermark, and this build's
  runs_to_rebuild (a model that failed on BigQuery after its pre-hook delete
  lost them). More work, never less.
  An incomplete build that ran per-run models is also recorded in
  goodput_incomplete_builds until the next complete build: a model it built
  (say entries_ordered alone, with --select) no longer matches the stored
  rows of the models it left out, so no model appends to what it stored
  until a complete build has recomputed the runs with new entries whole.
-#}
{% macro goodput_advance_build_watermark(results) -%}
  {%- if execute and results and flags.WHICH in ('build', 'run') -%}
    {%- set outcomes = {} -%}
    {%- set failed_tests = [] -%}
    {%- for result in results -%}
      {%- if result.node.resource_type == 'model' -%}
        {%- do outcomes.update({result.node.unique_id: result.status | string}) -%}
      {%- elif result.node.resource_type in ('test', 'unit_test') and (result.status | string) in ('fail', 'error') -%}
        {%- do failed_tests.append(result.node.name) -%}
      {%- endif -%}
    {%- endfor -%}
    {%- set incomplete = [] -%}
    {%- set ran = [] -%}
    {%- set runs_to_rebuild = [] -%}
    {%- for unique_id, node in graph.nodes.items() if node.resource_type == 'model' -%}
      {%- if node.config.get('goodput_rebuilt_when') or node.name == 'int_goodput__runs_to_rebuild' -%}
        {%- if outcomes.get(unique_id) != 'success' -%}{%- do incomplete.append(node.name) -%}{%- endif -%}
      {%- endif -%}
      {%- if node.config.get('goodput_rebuilt_when') and outcomes.get(unique_id) in ('success', 'error') -%}
        {%- do ran.append(node.name) -%}
      {%- endif -%}
      {%- if node.name == 'int_goodput__runs_to_rebuild' -%}
        {%- do runs_to_rebuild.append(api.Relation.create(database=node.database, schema=node.schema,
                                                          identifier=node.alias)) -%}
      {%- endif -%}
    {%- endfor -%}
    {%- if incomplete or failed_tests or not runs_to_rebuild -%}
      {%- do log("build watermark kept: not built or failed: " ~ (incomplete + failed_tests) | join(", "), info=false) -%}
      {%- if ran -%}
        {%- set relation = goodput_incomplete_builds_relation() -%}
        {%- do run_query("create table if not exists " ~ relation ~ " (invocation_id " ~ dbt.type_string()
                         ~ ", recorded_at " ~ dbt.type_timestamp() ~ ")") -%}
        {%- do run_query("insert into " ~ relation ~ " (invocation_id, recorded_at) values ("
                         ~ goodput_string_literal(invocation_id) ~ ", " ~ dbt.current_timestamp() ~ ")") -%}
      {%- endif -%}
    {%- else -%}
      {%- set relation = goodput_build_watermark_relation() -%}
      {%- do run_query("create table if not exists " ~ relation ~ " (loaded_through_us " ~ dbt.type_bigint()
                       ~ ", invocation_id " ~ dbt.type_string() ~ ", recorded_at " ~ dbt.type_timestamp() ~ ")") -%}
      {#- no new entry: the watermark stays where it was, the completed build is this one -#}
      {%- set seen = run_query("select max(loaded_through_us) from " ~ runs_to_rebuild[0]) -%}
      {%- set loaded_through_us = seen.rows[0][0] if seen.rows | length > 0 else none -%}
      {%- if loaded_through_us is none -%}{%- set loaded_through_us = goodput_build_watermark() -%}{%- endif -%}
      {%- do run_query("delete from " ~ relation ~ " where true") -%}
      {%- do run_query("insert into " ~ relation ~ " (loaded_through_us, invocation_id, recorded_at) values ("
                       ~ ("null" if loaded_through_us is none else loaded_through_us | int) ~ ", "
                       ~ goodput_string_literal(invocation_id) ~ ", " ~ dbt.current_timestamp() ~ ")") -%}
      {%- if goodput_incomplete_build_since_complete() -%}
        {%- do run_query("delete from " ~ goodput_incomplete_builds_relation() ~ " where true") -%}
      {%- endif -%}
    {%- endif -%}
  {%- endif -%}
{%- endmacro %}

{% macro goodput_incomplete_builds_relation() -%}
  {{ return(api.Relation.create(database=target.database, schema=target.schema,
                                identifier='goodput_incomplete_builds')) }}
{%- endmacro %}

{#- An incomplete build ran per-run models after the last complete build. -#}
{% macro goodput_incomplete_build_since_complete() -%}
  {{ return((goodput_bookkeeping_value(goodput_incomplete_builds_relation(), 'count(*)') or 0) > 0) }}
{%- endmacro %}


{#- The invocation of the last complete build, or none. -#}
{% macro goodput_completed_build() -%}
  {{ return(goodput_bookkeeping_value(goodput_build_watermark_relation(), 'max(invocation_id)')) }}
{%- endmacro %}


{#-
  pre_hook of the rolling models: a rebuilt run's stored windows off its new
  grid go. The grid usually only grows, but not always: a job end logged
  before the last build's evaluation time and landed after it ends the grid
  earlier than the windows that build stored, and a late entry can move the
  job start. Those windows would otherwise stay, counting time after the end.
-#}
{% macro goodput_forget_windows_off_the_grid(window_ends) -%}
  {%- if goodput_builds_incrementally() -%}
    delete from {{ this }} as stored
    where {{ goodput_run_is_rebuilt('stored.run_id', keyed=config.get('goodput_run_keyed', false)) }}
        and not exists (
            select 1
            from {{ window_ends }} as ends
            where ends.run_id = stored.run_id
                and stored.window_end_epoch between ends.first_window_end_epoch and ends.last_window_end_epoch
        )
  {%- else -%}
    select 1 as nothing_to_forget
  {%- endif -%}
{%- endmacro %}
