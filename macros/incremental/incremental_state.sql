{#
  The configuration an incremental model's stored rows were computed with.

  Every per-run model keeps its rows between builds and recomputes only the
  runs that changed (macros/incremental/rebuilt_runs.sql). Rows computed with
  other window sizes, another grid, another stall threshold, another configured
  ideal step time, another source or
  another version of the models would sit beside the new ones (mixed grids,
  leftover windows, runs counted two ways) with no error. So every build of such a
  model records its signature in goodput_incremental_state (post-hook), and an
  incremental build first checks it: a different signature stops the build
  with what to run instead. --full-refresh rebuilds and records the new one.

  Bump goodput_models_version when a change to the models changes the rows an
  incremental model would store for the same entries.
#}

{% macro goodput_models_version() -%}
  {{ return(12) }}
{%- endmacro %}

{% macro goodput_incremental_signature() -%}
  {{ return(tojson({
      'models_version': goodput_models_version(),
      'goodput_source': var('goodput_source', 'loader'),
      'goodput_ideal_step_seconds': var('goodput_ideal_step_seconds', none),
      'goodput_stall_seconds': var('goodput_stall_seconds', 3600) | int,
      'rolling_grid_seconds': var('rolling_grid_seconds') | int,
      'rolling_windows_seconds': var('rolling_windows_seconds') | map('int') | list,
  }, sort_keys=True)) }}
{%- endmacro %}

{% macro goodput_incremental_state_relation() -%}
  {{ return(api.Relation.create(database=target.database, schema=target.schema,
                                identifier='goodput_incremental_state')) }}
{%- endmacro %}

{#- In the model's body, before anything else: stops an incremental build whose configuration changed. -#}
{% macro goodput_check_incremental_state() -%}
  {%- if goodput_builds_incrementally() -%}
    {%- set wanted = goodput_incremental_signature() -%}
    {%- set state = adapter.get_relation(database=target.database, schema=target.schema,
                                         identifier='goodput_incremental_state') -%}
    {%- set stored = none -%}
    {%- if state is not none -%}
      {%- set found = run_query("select signature from " ~ state ~ " where model_name = "
                                ~ goodput_string_literal(this.identifier)) -%}
      {%- if found.rows | length > 0 -%}{%- set stored = found.rows[0][0] -%}{%- endif -%}
    {%- endif -%}
    {%- if stored != wanted -%}
      {{ exceptions.raise_compiler_error(
          this.identifier ~ " holds rows computed with " ~ (stored or "a configuration that was not recorded (an older version)")
          ~ ", and this build asks for " ~ wanted ~ ". An incremental build would mix the two. "
          ~ "Rebuild from scratch: goodput-loader build [--var ...] -- --full-refresh "
          ~ "(or dbt build --full-refresh); every later build then stays incremental.") }}
    {%- endif -%}
  {%- endif -%}
{%- endmacro %}

{#- post_hook of every incremental model: the signature its rows now have. -#}
{% macro goodput_incremental_state_hooks() -%}
  {{ return([
      "create table if not exists {{ goodput_incremental_state_relation() }} (model_name {{ dbt.type_string() }}, signature {{ dbt.type_string() }}, built_at {{ dbt.type_timestamp() }})",
      "delete from {{ goodput_incremental_state_relation() }} where model_name = {{ goodput_string_literal(this.identifier) }}",
      "insert into {{ goodput_incremental_state_relation() }} (model_name, signature, built_at) values ({{ goodput_string_literal(this.identifier) }}, {{ goodput_string_literal(goodput_incremental_signature()) }}, {{ dbt.current_timestamp() }})",
  ]) }}
{%- endmacro %}
