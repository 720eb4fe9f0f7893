{#
  The exclusion windows of every run they apply to, as the library normalises
  the list get_job_goodput_with_exclusions is given (exclusion_utils.normalize_intervals):
  windows whose start is not before their end are dropped, the rest sorted and
  merged wherever one starts at or before the end of those before it (touching
  windows merge). A window declared for every run (run null) applies to each.
#}

with

declared as (

    {{ goodput_exclusion_rows() }}

),

runs as (

    select run_id, run_name from {{ ref('int_goodput__run_totals') }}

),

applicable as (

    select
        runs.run_id,
        declared.start_epoch,
        declared.end_epoch,
        declared.reason
    from declared
    inner join runs
        on declared.run is null
        or declared.run = runs.run_id
        or declared.run = runs.run_name
    where declared.start_epoch < declared.end_epoch

),

ordered as (

    select
        *,
        max(end_epoch) over (
            partition by run_id order by start_epoch, end_epoch
            rows between unbounded preceding and 1 preceding
        ) as previous_max_end_epoch
    from applicable

),

islands as (

    select
        *,
        cast(sum(case when previous_max_end_epoch is null or start_epoch > previous_max_end_epoch then 1 else 0 end) over (
            partition by run_id order by start_epoch, end_epoch
            rows between unbounded preceding and current row
        ) as {{ dbt.type_bigint() }}) as window_no
    from ordered

),

merged as (

    select
        run_id,
        window_no,
        min(start_epoch) as start_epoch,
        max(end_epoch) as end_epoch,
        count(*) as declared_windows,
        {{ dbt.listagg('reason', "'; '", 'order by start_epoch') }} as reasons
    from islands
    group by run_id, window_no

)

select * from merged
