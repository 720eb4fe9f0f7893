{#
  The library's Badput buckets from a row of totals, as both of its
  computations (get_job_goodput and get_job_goodput_with_exclusions) finish
  them, one CTE body each:
  - goodput_badput_unpivoted: one row per bucket (custom events per type) from
    the totals' columns (goodput_badput_columns) and a relation of custom
    event seconds (run_id, custom_badput_event_type, badput_seconds);
  - goodput_badput_sanitized: a value below 0 or above the total becomes 0
    (_sanitize_unproductive_times), flagged;
  - goodput_badput_other: OTHER = total - productive - every bucket that
    counts against Goodput (the catalogue says which), never negative
    (_compute_other_unproductive_time).
  `total_column` names the total the run's shares are of (the elapsed time,
  or the adjusted total of the exclusion path); goodput_badput_share is a
  bucket's share of it.
#}

{#- Each bucket the totals hold as a column, in the catalogue's order (custom events come per type). -#}
{% macro goodput_badput_columns() -%}
  {{ return([
      ('TPU_INITIALIZATION', 'tpu_initialization_seconds'),
      ('TRAINING_PREP', 'training_prep_seconds'),
      ('PROGRAM_STARTUP', 'program_startup_seconds'),
      ('DATA_LOADING_SYNC', 'data_loading_sync_seconds'),
      ('DATA_LOADING_ASYNC', 'data_loading_async_seconds'),
      ('UNPRODUCTIVE_CHECKPOINT_SAVE_TIME', 'checkpoint_save_seconds'),
      ('UNPRODUCTIVE_CHECKPOINT_RESTORE_TIME', 'checkpoint_restore_seconds'),
      ('WASTED_PROGRESS_FROM_DISRUPTION', 'wasted_progress_seconds'),
      ('INFRASTRUCTURE_RECOVERY_FROM_DISRUPTION', 'infrastructure_recovery_seconds'),
  ]) }}
{%- endmacro %}

{#- The elastic buckets (ElasticGoodputCalculator): rows of elastic runs only (totals.is_elastic). -#}
{% macro goodput_elastic_badput_columns() -%}
  {{ return([
      ('ELASTIC_SLICE_DOWN', 'elastic_slice_down_seconds'),
      ('ELASTIC_SCALE_UP', 'elastic_scale_up_seconds'),
      ('ELASTIC_REINITIALIZATION', 'elastic_reinitialization_seconds'),
  ]) }}
{%- endmacro %}

{#- elastic: the totals have is_elastic and the elastic columns (goodput_elastic_badput_columns). -#}
{% macro goodput_badput_unpivoted(totals, custom, elastic=false) -%}
    {%- for badput_type, column in goodput_badput_columns() %}
    select
        run_id,
        '{{ badput_type }}' as badput_type,
        cast(null as {{ dbt.type_string() }}) as custom_badput_event_type,
        {{ column }} as raw_seconds
    from {{ totals }}
    union all
    {%- endfor %}
    {%- if elastic %}
    {%- for badput_type, column in goodput_elastic_badput_columns() %}
    select
        run_id,
        '{{ badput_type }}' as badput_type,
        cast(null as {{ dbt.type_string() }}) as custom_badput_event_type,
        coalesce({{ column }}, 0) as raw_seconds
    from {{ totals }}
    where is_elastic
    union all
    {%- endfor %}
    {%- endif %}
    select
        run_id,
        'CUSTOM_BADPUT_EVENTS' as badput_type,
        custom_badput_event_type,
        badput_seconds as raw_seconds
    from {{ custom }}
{%- endmacro %}

{% macro goodput_badput_sanitized(unpivoted, totals, total_column) -%}
    select
        unpivoted.run_id,
        unpivoted.badput_type,
        unpivoted.custom_badput_event_type,
        unpivoted.raw_seconds,
        totals.{{ total_column }},
        (unpivoted.raw_seconds < 0 or unpivoted.raw_seconds > totals.{{ total_column }}) as was_sanitized,
        case
            when unpivoted.raw_seconds < 0 or unpivoted.raw_seconds > totals.{{ total_column }} then 0
            else unpivoted.raw_seconds
        end as badput_seconds
    from {{ unpivoted }} as unpivoted
    inner join {{ totals }} as totals
        on totals.run_id = unpivoted.run_id
    where totals.{{ total_column }} is not null
{%- endmacro %}

{% macro goodput_badput_other(sanitized, totals, total_column, badput_types) -%}
    select
        totals.run_id,
        'OTHER' as badput_type,
        cast(null as {{ dbt.type_string() }}) as custom_badput_event_type,
        totals.{{ total_column }} - totals.productive_seconds - coalesce(counted.counted_seconds, 0) as raw_seconds,
        totals.{{ total_column }},
        false as was_sanitized,
        greatest(0, totals.{{ total_column }} - totals.productive_seconds - coalesce(counted.counted_seconds, 0))
            as badput_seconds
    from {{ totals }} as totals
    inner join (select distinct run_id from {{ sanitized }}) as bucketed
        on bucketed.run_id = totals.run_id
    left join (
        select sanitized.run_id, sum(sanitized.badput_seconds) as counted_seconds
        from {{ sanitized }} as sanitized
        inner join {{ badput_types }} as badput_types
            on badput_types.badput_type = sanitized.badput_type
        where badput_types.counts_against_goodput
        group by sanitized.run_id
    ) as counted
        on counted.run_id = totals.run_id
{%- endmacro %}


{#- A bucket's share of the total as _get_job_badput_breakdown reports it: 0 unless strictly between 0 and the total. -#}
{% macro goodput_badput_share(seconds, total) -%}
    case
        when {{ seconds }} > 0 and {{ seconds }} < {{ total }} then {{ seconds }} / {{ total }} * 100
        else 0.0
    end
{%- endmacro %}
