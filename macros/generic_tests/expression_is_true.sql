{#
  Every row satisfies a boolean SQL expression (evaluated per row).
  `where` restricts the rows checked, as dbt's own `where` config does.
#}
{% test expression_is_true(model, expression) %}

with

violations as (
    select *
    from {{ model }}
    where not coalesce(({{ expression }}), false)
)

select * from violations

{% endtest %}
