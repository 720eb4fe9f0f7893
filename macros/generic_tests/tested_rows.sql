{#
  The rows a generic test reads (dbt's get_where_subquery, overridden).

  Besides the test's own `where`, a test of a per-run model (and of staging,
  goodput_tested_runs='new_entries') in an incremental `dbt build` reads only
  the runs this build recomputed (int_goodput__runs_to_rebuild): the other
  runs' rows are the ones the last builds wrote and tested, untouched since.
  A test of the loader's raw table reads the entries landed since the last
  complete build. So the tests of an hourly build
  cost what its models cost, not a scan of the whole history. Duplicates can
  only come from rebuilt runs, and a relationships test still looks its
  parents up in the whole parent table. `dbt test`, and every build from
  scratch (--full-refresh, or before the first complete build), tests every row.
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


{#- A predicate on run_id keeping the runs this build recomputed in the per-run model relation, or ''. -#}
{% macro goodput_tested_runs(relation) -%}
  {%- if not execute or flags.WHICH != 'build' or flags.FULL_REFRESH or relation.identifier is not defined -%}
    {{ return('') }}
  {%- endif -%}
  {%- set watermark_us = goodput_build_watermark() -%}
  {%- if watermark_us is none -%}{{ return('') }}{%- endif -%}
  {%- for source in graph.sources.values() if source.source_name == 'goodput_raw' -%}
    {%- if source.identifier == relation.identifier and source.schema == relation.schema -%}
      {{ return(goodput_loaded_after('loaded_at', watermark_us - (var('goodput_late_arrival_seconds', 0) | int) * 1000000)) }}
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
  {#- the watermark exists once a build has completed: from then on every per-run table is incremental -#}
  {%- if tested.rebuilt_when is none or tested.runs_to_rebuild is none -%}
    {{ return('') }}
  {%- endif -%}
  {{ return("run_id in (select run_id from " ~ tested.runs_to_rebuild
            ~ (" where has_new_entries" if tested.rebuilt_when == 'new_entries' else "") ~ ")") }}
{%- endmacro %}
