{#
  Rows are unique on a combination of columns (dbt_utils cannot be installed
  offline, so the few generic tests we need live here).
#}
{% test unique_combination_of_columns(model, combination_of_columns) %}

with

duplicates as (
    select
        {{ combination_of_columns | join(', ') }},
        count(*) as occurrences
    from {{ model }}
    group by {{ combination_of_columns | join(', ') }}
    having count(*) > 1
)

select * from duplicates

{% endtest %}
