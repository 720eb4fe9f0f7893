{#
  Every row satisfies a boolean SQL expression (evaluated per row).
  `where` restricts the rows checked, as dbt's own `where` config does. Works
  on a model or on a column (the column is then only documentation).
#}
{% test expression_is_true(model, expression, column_name=none) %}

with

violations as (
    select *
    from {{ model }}
    where not coalesce(({{ expression }}), false)
)

select * from violations

{% endtest %}
