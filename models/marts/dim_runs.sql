{{ config(**goodput_incremental_by_run('evaluated')) }}
{{ goodput_check_incremental_state() }}
{#
  One row per run in the warehouse, whether or not its entries are counted:
  where it is logged, how much was landed, and how it ended.
#}

with

events as (

    select * from {{ ref('stg_goodput__events') }}
    where {{ goodput_run_is_rebuilt('run_id', name_column='run_name') }}

),

{# the entries the library counts are the ones int_goodput__entries_ordered holds: counting them there
    spares parsing every payload of the run for its job name again (staging's is_counted); a sum, as the
    stored column's type was (HUGEINT on DuckDB), so a warehouse built before needs no full refresh #}
counted as (

    select run_id, sum(1) as counted_entries
    from {{ ref('int_goodput__entries_ordered') }}
    where {{ goodput_run_is_rebuilt(keyed=true) }}
    group by run_id

),

cumulative as (

    select * from {{ ref('fct_goodput_cumulative') }}
    where {{ goodput_run_is_rebuilt() }}

),

runs as (

    select
        run_id,
        min(project_id) as project_id,
        min(run_name) as run_name,
        min(log_name) as log_name,
        count(*) as landed_entries,
        sum(case when not job_name_matches then 1 else 0 end) as foreign_job_name_entries,
        min(entry_at) as first_entry_at,
        max(entry_at) as last_entry_at,
        max(loaded_at) as last_loaded_at
    from events
    group by run_id

),

final as (

    select
        runs.run_id,
        runs.project_id,
        runs.run_name,
        runs.log_name,
        runs.landed_entries,
        coalesce(counted.counted_entries, 0) as counted_entries,
        runs.foreign_job_name_entries,
        runs.first_entry_at,
        runs.last_entry_at,
        runs.last_loaded_at,
        cumulative.first_job_start_at,
        cumulative.last_job_end_at,
        coalesce(cumulative.is_name_reused, false) as is_name_reused,
        case
            when cumulative.run_id is null then 'no counted entries'
            when cumulative.first_job_start_at is null then 'no job start'
            when cumulative.is_stalled then 'stalled'
            when cumulative.is_running then 'running'
            else 'finished'
        end as status
    from runs
    left join counted on counted.run_id = runs.run_id
    left join cumulative on cumulative.run_id = runs.run_id

)

select
    run_id,
    project_id,
    run_name,
    log_name,
    landed_entries,
    counted_entries,
    foreign_job_name_entries,
    first_entry_at,
    last_entry_at,
    last_loaded_at,
    first_job_start_at,
    last_job_end_at,
    is_name_reused,
    status
from final
