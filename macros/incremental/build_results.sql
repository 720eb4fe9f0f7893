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
    {%- set ids = [] -%}
    {%- set rows = [] -%}
    {%- for result in results if result.node.resource_type in ('model', 'test', 'seed', 'snapshot') -%}
      {%- do ids.append(goodput_string_literal(result.node.unique_id)) -%}
      {%- do rows.append("(" ~ goodput_string_literal(result.node.unique_id) ~ ", "
                         ~ goodput_string_literal(result.status | string) ~ ", "
                         ~ goodput_string_literal((result.message or '') | string | truncate(500)) ~ ", "
                         ~ goodput_string_literal(invocation_id) ~ ", " ~ dbt.current_timestamp() ~ ")") -%}
    {%- endfor -%}
    {%- if rows -%}
      {%- do run_query("delete from " ~ relation ~ " where unique_id in (" ~ ids | join(", ") ~ ")") -%}
      {%- do run_query("insert into " ~ relation ~ " (unique_id, status, message, invocation_id, finished_at) values "
                       ~ rows | join(", ")) -%}
    {%- endif -%}
  {%- endif -%}
{%- endmacro %}
