{{
    config(
        materialized='incremental',
        incremental_strategy=goodput_incremental_strategy(),
        unique_key=goodput_incremental_key(['run_id', 'window_end_epoch'], ['window_seconds', 'gcm_badput_source']),
        partition_by=goodput_partition_by('window_end_at'),
        cluster_by=goodput_cluster_by(['run_id', 'window_seconds', 'badput_type']),
        on_schema_change='fail',
        goodput_rebuilt_when='evaluated',
        pre_hook="{{ goodput_forget_windows_off_the_grid(ref('int_goodput__rolling_window_ends')) }}",
        post_hook=goodput_incremental_state_hooks()
    )
}}
{{ goodput_check_incremental_state() }}
-- depends_on: {{ ref('int_goodput__rolling_window_ends') }}
{#
  One row per (run, window size, window end on the grid, Badput bucket, custom
  event type or null): the bucket's seconds inside the window and their share
  of the window's elapsed time. Every bucket of the run appears in every
  window (0 when none of it falls there); over a window covering the whole job
  the seconds equal fct_badput_breakdown.
#}

with

rolling_values as (

    select * from {{ ref('int_goodput__rolling_window_values') }}
    {% if is_incremental() %}
    -- (an empty table has no max: everything is new)
    where computed_at > (select coalesce(max(computed_at), cast('1970-01-01' as {{ dbt.type_timestamp() }})) from {{ this }})
    {% endif %}

),

badput_types as (

    select * from {{ ref('badput_types') }}

),

runs as (

    select run_id, project_id, run_name from {{ ref('int_goodput__run_totals') }}
    where {{ goodput_run_is_rebuilt() }}

),

window_buckets as (

    {{ goodput_window_buckets('rolling_values', 'badput_types', extra=['computed_at']) }}

)

select
    window_buckets.run_id,
    runs.project_id,
    runs.run_name,
    window_buckets.window_seconds,
    window_start_at,
    window_end_at,
    elapsed_seconds,
    badput_type,
    custom_badput_event_type,
    gcm_badput_source,
    badput_type_id,
    counts_against_goodput,
    exported_to_gcm,
    badput_seconds,
    badput_pct,
    is_partial,
    window_end_epoch,
    computed_at
from window_buckets
inner join runs
    on runs.run_id = window_buckets.run_id
{{ goodput_rows_by_run() }}
