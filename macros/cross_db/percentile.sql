{#
  Exact continuous percentile (linear interpolation, numpy's default and the
  library's compute_percentile) as a window over a partition. Nulls are ignored.
  BigQuery has an exact percentile only as an analytic function, so both
  implementations are windows; callers take one row per partition.
#}

{% macro goodput_percentile_cont_over(expr, fraction, partition_by) -%}
  {{ return(adapter.dispatch('goodput_percentile_cont_over', 'goodput_warehouse')(expr, fraction, partition_by)) }}
{%- endmacro %}

{% macro default__goodput_percentile_cont_over(expr, fraction, partition_by) -%}
  quantile_cont({{ expr }}, {{ fraction }}) over (partition by {{ partition_by }})
{%- endmacro %}

{% macro bigquery__goodput_percentile_cont_over(expr, fraction, partition_by) -%}
  percentile_cont({{ expr }}, {{ fraction }}) over (partition by {{ partition_by }})
{%- endmacro %}
