{#-
  A value recomputed by an incremental build against the one a model stored
  for it: equal up to the rounding of another summation order (1e-9 relative,
  1e-9 absolute near zero). The models that keep stored rows only when the
  recomputed state at their edge matches (the curves' head, the rolling
  windows before the moved point) use it, so both draw the line in the same
  place: tighter would recompute runs for float noise, looser would keep rows
  that a full build changes.
-#}
{% macro goodput_matches_stored(computed, stored) -%}
    abs(({{ computed }}) - ({{ stored }})) <= 1e-9 * greatest(1, abs({{ stored }}))
{%- endmacro %}
