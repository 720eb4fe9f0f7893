{#
  The relation an incremental build inserts from. dbt materializes a model's
  select into a temporary table, then inserts that table into the model's: a
  per-run model rebuilding a run writes its rows twice. At L (one run of 3.3M
  entries, dirty every build) that second copy was 12 s of a 48 s build
  (entries_ordered, entries_segmented, timeline_curves and timeline_amounts
  copy millions of wide rows). On DuckDB a per-run model's temporary relation
  appending (goodput_incremental_by_run) is a view instead: the schema check
  (on_schema_change) reads its columns, which binds the query without running
  it, and the one insert runs the query once, straight into the table, after
  the pre-hook's delete as the temporary table's select did. Only for append:
  delete+insert (the rolling marts) reads the temporary relation twice, a
  delete between, and a view over a query that reads the model's own table
  would give the insert other rows than the delete saw. Every other relation
  (tables, full builds, other adapters) is created as dbt-duckdb or dbt-core
  creates it.

  This overrides dbt's create_table_as (a project macro takes precedence over
  the adapter's), so it must keep its signature: dbt-duckdb's, which passes
  partitioned_by and sorted_by.
#}
{% macro create_table_as(temporary, relation, compiled_code, language='sql', partitioned_by=none, sorted_by=none) -%}
  {{ return(adapter.dispatch('goodput_create_table_as', 'goodput_warehouse')(
      temporary, relation, compiled_code, language, partitioned_by, sorted_by)) }}
{%- endmacro %}

{% macro default__goodput_create_table_as(temporary, relation, compiled_code, language, partitioned_by, sorted_by) -%}
  {#- dbt-core's create_table_as -#}
  {%- if language == 'sql' -%}
    {{ return(adapter.dispatch('create_table_as', 'dbt')(temporary, relation, compiled_code)) }}
  {%- else -%}
    {{ return(adapter.dispatch('create_table_as', 'dbt')(temporary, relation, compiled_code, language)) }}
  {%- endif -%}
{%- endmacro %}

{% macro duckdb__goodput_create_table_as(temporary, relation, compiled_code, language, partitioned_by, sorted_by) -%}
  {%- if temporary and language == 'sql' and config.get('goodput_rebuilt_when')
        and config.get('incremental_strategy') == 'append' -%}
    {{ return('create or replace temporary view ' ~ relation.include(database=false, schema=false)
              ~ ' as (\n' ~ compiled_code ~ '\n)') }}
  {%- endif -%}
  {#- dbt-duckdb's create_table_as -#}
  {{ return(adapter.dispatch('create_table_as', 'dbt')(temporary, relation, compiled_code, language,
                                                        partitioned_by=partitioned_by, sorted_by=sorted_by)) }}
{%- endmacro %}
