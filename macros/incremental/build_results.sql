{#
  on-run-end: the latest outcome of every node a dbt invocation ran, in
  goodput_build_results (one row per node, replaced by the next run of it).

  A failed model leaves its table as the previous build left it, and a failed
  test means a mart breaks a promise; dbt still writes every other mart. So
  `goodput-loader report` and `push` read this table first and refuse marts
  while any node's latest outcome is a failure or a skip (it names them).
  A later successful run of those nodes clears them.
#}

{% macro goodput_record_build_results(results) -%}
  {#- compile, show, docs: nothing was built, so nothing to record -#}
  {%- if execute and results and flags.WHICH in ('build', 'run', 'test', 'seed', 'snapshot') -%}
    {%- set relation = api.Relation.create(database=target.database, schema=target.schema,
                                           identifier='goodput_build_results') -%}
    {%- do run_query("create table if not exists " ~ relation ~ " (unique_id " ~ dbt.type_string()
                     ~ ", status " ~ dbt.type_string() ~ ", message " ~ dbt.type_string()
                     ~ ", invocation_id " ~ dbt.type_string() ~ ", finished_at " ~ dbt.type_timestamp() ~ ")") -%}
    {#- A test of an incremental build reads only the runs it rebuilt (macros/generic_tests/tested_rows.sql):
        its pass says nothing about the other runs, so it does not clear a failure a test of every row
        found (dbt test, or a build from scratch); a later test of every row does. -#}
    {%- set partial = goodput_tests_read_rebuilt_runs() -%}
    {%- set standing = [] -%}
    {%- if partial -%}
      {%- set found = run_query("select unique_id from " ~ relation ~ " where status in ('fail', 'error') and "
                                ~ "coalesce(message, '') not like '%" ~ goodput_partial_test_marker() ~ "%'") -%}
      {%- set standing = found.columns[0].values() | list -%}
    {%- endif -%}
    {%- set ids = [] -%}
    {%- set rows = [] -%}
    {%- for result in results if result.node.resource_type in ('model', 'test', 'seed', 'snapshot') -%}
      {%- set is_partial_test = partial and result.node.resource_type == 'test' -%}
      {%- if not (is_partial_test and (result.status | string) == 'pass' and result.node.unique_id in standing) -%}
        {%- set message = (result.message or '') | string | truncate(450) -%}
        {%- if is_partial_test -%}{%- set message = message ~ " " ~ goodput_partial_test_marker() -%}{%- endif -%}
        {%- do ids.append(goodput_string_literal(result.node.unique_id)) -%}
        {%- do rows.append("(" ~ goodput_string_literal(result.node.unique_id) ~ ", "
                           ~ goodput_string_literal(result.status | string) ~ ", "
                           ~ goodput_string_literal(message) ~ ", "
                           ~ goodput_string_literal(invocation_id) ~ ", " ~ dbt.current_timestamp() ~ ")") -%}
      {%- endif -%}
    {%- endfor -%}
    {#- nodes that no longer exist (renamed or removed models and tests) cannot be built again, so
        their last outcome would block report and push for ever -#}
    {%- set current = [] -%}
    {%- for unique_id in graph.nodes -%}{%- do current.append(goodput_string_literal(unique_id)) -%}{%- endfor -%}
    {%- if current -%}
      {%- do run_query("delete from " ~ relation ~ " where unique_id not in (" ~ current | join(", ") ~ ")") -%}
    {%- endif -%}
    {%- if rows -%}
      {%- do run_query("delete from " ~ relation ~ " where unique_id in (" ~ ids | join(", ") ~ ")") -%}
      {%- do run_query("insert into " ~ relation ~ " (unique_id, status, message, invocation_id, finished_at) values "
                       ~ rows | join(", ")) -%}
    {%- endif -%}
  {%- endif -%}
{%- endmacro %}


{#
  on-run-end of a build or run: drop the tables of models this project renamed, so a warehouse built
  by an older version holds no stale copies (they would still answer ad-hoc SQL, with old keys).
#}
{% macro goodput_drop_retired_models() -%}
  {%- set retired = [
      'int_goodput__restarts', 'int_goodput__segment_metrics', 'int_goodput__located_amounts',
      'int_goodput__located_curves', 'int_goodput__rolling_values',
  ] -%}
  {%- if execute and flags.WHICH in ('build', 'run') -%}
    {%- for name in retired -%}
      {%- set relation = adapter.get_relation(database=target.database, schema=target.schema, identifier=name) -%}
      {%- if relation is not none -%}
        {%- do adapter.drop_relation(relation) -%}
        {%- do log("dropped " ~ relation ~ ": a model this version renamed", info=true) -%}
      {%- endif -%}
    {%- endfor -%}
  {%- endif -%}
{%- endmacro %}
