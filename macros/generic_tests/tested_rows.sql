{#
  The rows a generic test reads (dbt's get_where_subquery, overridden).

  Besides the test's own `where`, a test in an incremental `dbt build` reads
  only the runs that build can have changed: the other runs' rows are the
  ones earlier builds wrote and tested, untouched since. So the tests of an
  hourly build cost what its models cost, not a scan of the whole history.
  - a per-run model: the runs it rebuilt (int_goodput__runs_to_rebuild);
  - the step-time view (config goodput_tested_runs='new_entries'): the runs
    rebuilt for new entries;
  - staging (goodput_tested_runs='landed_since_last_build') and the loader's
    raw table: every entry of the runs with entries landed since the last
    complete build, old ones included, so a new duplicate of an old entry is
    still caught.
  Rows without a run stay in (a not_null test on run_id can still fail), and a
  relationships test still looks its parents up in the whole parent table.
  `dbt test`, and every build from scratch (--full-refresh, or before the
  first complete build), test every row; a pass of a test that read only
  rebuilt runs never clears a failure found over every row
  (goodput_record_build_results).
#}

{% macro default__get_where_subquery(relation) -%}
  {%- set conditions = [] -%}
  {%- set where = config.get('where', '') -%}
  {%- if where -%}{%- do conditions.append(where) -%}{%- endif -%}
  {%- set rebuilt = goodput_tested_runs(relation) -%}
  {%- if rebuilt -%}{%- do conditions.append(rebuilt) -%}{%- endif -%}
  {%- if conditions -%}
    {%- set filtered -%}
      (select * from {{ relation }} where ({{ conditions | join(') and (') }})) dbt_subquery
    {%- endset -%}
    {%- do return(filtered) -%}
  {%- else -%}
    {%- do return(relation) -%}
  {%- endif -%}
{%- endmacro %}


{#- Tests of this invocation read only the runs it rebuilt: an incremental dbt build after a complete one. -#}
{% macro goodput_tests_read_rebuilt_runs() -%}
  {%- if not execute or flags.WHICH != 'build' or flags.FULL_REFRESH -%}{{ return(false) }}{%- endif -%}
  {#- (dbt's relation cache answers this without a query) -#}
  {%- set watermark = goodput_build_watermark_relation() -%}
  {{ return(adapter.get_relation(database=watermark.database, schema=watermark.schema,
                                 identifier=watermark.identifier) is not none) }}
{%- endmacro %}

{% macro goodput_partial_test_marker() -%}
  {{ return('[tested: rebuilt runs only]') }}
{%- endmacro %}


{#- A predicate keeping the rows of relation this build can have changed, or '' for every row. -#}
{% macro goodput_tested_runs(relation) -%}
  {%- if relation.identifier is not defined or not goodput_tests_read_rebuilt_runs() -%}{{ return('') }}{%- endif -%}
  {%- for source in graph.sources.values() if source.source_name == 'goodput_raw' -%}
    {%- if source.identifier == relation.identifier and source.schema == relation.schema -%}
      {{ return(goodput_tested_new_entry_runs(relation, 'log_name')) }}
    {%- endif -%}
  {%- endfor -%}
  {%- set tested = namespace(rebuilt_when=none, runs_to_rebuild=none) -%}
  {%- for node in graph.nodes.values() if node.resource_type == 'model' -%}
    {%- if node.alias == relation.identifier and node.schema == relation.schema -%}
      {%- set tested.rebuilt_when = node.config.get('goodput_rebuilt_when') or node.config.get('goodput_tested_runs') -%}
    {%- endif -%}
    {%- if node.name == 'int_goodput__runs_to_rebuild' -%}
      {%- set tested.runs_to_rebuild = api.Relation.create(database=node.database, schema=node.schema,
                                                           identifier=node.alias) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- if tested.rebuilt_when == 'landed_since_last_build' -%}
    {{ return(goodput_tested_new_entry_runs(relation, 'run_id', 'run_name')) }}
  {%- elif tested.rebuilt_when is none or tested.runs_to_rebuild is none -%}
    {{ return('') }}
  {%- endif -%}
  {{ return(goodput_run_key_in('run_id', "select run_id from " ~ tested.runs_to_rebuild
                                ~ (" where has_new_entries" if tested.rebuilt_when == 'new_entries' else ""))) }}
{%- endmacro %}

{#- Every row of the runs (by key: run_id or log_name) with entries landed after the watermark. -#}
{% macro goodput_tested_new_entry_runs(relation, key, name_column=none) -%}
  {%- set watermark_us = goodput_build_watermark() -%}
  {%- if watermark_us is none -%}{{ return('') }}{%- endif -%}
  {%- set after_us = watermark_us - (var('goodput_late_arrival_seconds', 0) | int) * 1000000 -%}
  {{ return(goodput_run_key_in(key, "select distinct " ~ key ~ " from " ~ relation ~ " where "
                                      ~ goodput_loaded_after('loaded_at', after_us), name_column)) }}
{%- endmacro %}

{#-
  key is null, or one of the keys keys_sql returns: inlined as a list when there are at most 1,000,
  so DuckDB filters at the scan (a subquery under an `or` would let staging parse every payload first).
  With name_column, the keys are run ids and their names filter that stored column too.
-#}
{% macro goodput_run_key_in(key, keys_sql, name_column=none) -%}
  {%- set found = run_query(keys_sql ~ " limit 1001") -%}
  {%- set keys = found.columns[0].values() | list -%}
  {%- if keys | length > 1000 -%}
    {{ return(key ~ " is null or " ~ key ~ " in (" ~ keys_sql ~ ")") }}
  {%- endif -%}
  {%- set literals = [] -%}
  {%- for value in keys if value is not none -%}{%- do literals.append(goodput_string_literal(value)) -%}{%- endfor -%}
  {#- the keys are run ids here when name_column is given: their names also filter the stored column -#}
  {{ return(goodput_run_names_among(keys, name_column) ~ "(" ~ key ~ " is null"
            ~ ((" or " ~ goodput_in_list(key, literals)) if literals else "") ~ ")") }}
{%- endmacro %}
