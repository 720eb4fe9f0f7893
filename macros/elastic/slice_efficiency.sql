{#
  Slice efficiency of elastic (Pathways) runs, as
  ElasticGoodputCalculator._compute_time_weighted_efficiency computes it: over
  [start, end], the share of slices stepping (active / total) and available
  (available / total), each slice-count record holding until the next, time
  weighted and divided by end - start.
  - The record in force at the start is the last one at or before it (in
    processing order among equal times); records after the start and before
    the end change it. Before the first record the share counts as 0: a run
    whose first record comes late, or a window that opens before any record,
    scores lower than its slices were (the library's figure, kept as is).
  - A missing active or available count is 0, a total below 1 is 1.
  - 0.0 where there is no record at or before the end or end <= start; null
    where the run has no slice-count record at all (the library then reports
    no efficiency).

  goodput_slice_count_records(entries): one row per slice-count entry of a
  relation of ordered entries (int_goodput__entries_ordered's columns):
  run_id, event_seq, record_epoch, stepping_share, available_share.

  goodput_slice_efficiency(records, bounds, keys): one row per row of `bounds`
  (its `keys`, which begin with run_id, then start_epoch and end_epoch):
  stepping_slice_efficiency, available_slice_efficiency (the library's), and
  stepping_slice_efficiency_observed, available_slice_efficiency_observed: the
  same weighted over the time some record was in force only (from the record
  in force at the start, or the first one after it), so the time before the
  first record is unknown rather than 0 slices; null where no record is in
  force before the end.
#}

{% macro goodput_slice_count_records(entries) -%}
    select
        run_id,
        event_seq,
        elastic_slice_counts_epoch as record_epoch,
        coalesce(active_slices, 0) * 1.0 / greatest(coalesce(total_slices, 1), 1) as stepping_share,
        coalesce(available_slices, 0) * 1.0 / greatest(coalesce(total_slices, 1), 1) as available_share
    from {{ entries }}
    where elastic_slice_counts_epoch is not null
{%- endmacro %}

{% macro goodput_slice_efficiency(records, bounds, keys=['run_id']) -%}
    select
        {% for key in keys %}bounds.{{ key }},
        {% endfor -%}
        case
            when recorded.run_id is null then null
            when bounds.end_epoch <= bounds.start_epoch then 0.0
            else coalesce(weighted.stepping_seconds, 0) / (bounds.end_epoch - bounds.start_epoch)
        end as stepping_slice_efficiency,
        case
            when recorded.run_id is null then null
            when bounds.end_epoch <= bounds.start_epoch then 0.0
            else coalesce(weighted.available_seconds, 0) / (bounds.end_epoch - bounds.start_epoch)
        end as available_slice_efficiency,
        weighted.stepping_seconds / nullif(weighted.covered_seconds, 0) as stepping_slice_efficiency_observed,
        weighted.available_seconds / nullif(weighted.covered_seconds, 0) as available_slice_efficiency_observed
    from {{ bounds }} as bounds
    left join (select distinct run_id from {{ records }}) as recorded
        on recorded.run_id = bounds.run_id
    left join (
        select
            {% for key in keys %}{{ key }},
            {% endfor -%}
            sum(stepping_share * (coalesce(next_epoch, end_epoch) - at_epoch)) as stepping_seconds,
            sum(available_share * (coalesce(next_epoch, end_epoch) - at_epoch)) as available_seconds,
            sum(coalesce(next_epoch, end_epoch) - at_epoch) as covered_seconds
        from (
            select
                points.*,
                lead(points.at_epoch) over (
                    partition by {{ keys | join(', ') }} order by points.at_epoch, points.point_seq
                ) as next_epoch
            from (
                -- the record in force at the start, moved to the start
                select
                    {% for key in keys %}{{ key }},
                    {% endfor -%}
                    end_epoch,
                    start_epoch as at_epoch,
                    -1 as point_seq,
                    stepping_share,
                    available_share
                from (
                    select
                        {% for key in keys %}bounds.{{ key }},
                        {% endfor -%}
                        bounds.start_epoch,
                        bounds.end_epoch,
                        records.stepping_share,
                        records.available_share,
                        row_number() over (
                            partition by {% for key in keys %}bounds.{{ key }}{{ ", " if not loop.last }}{% endfor %}
                            order by records.record_epoch desc, records.event_seq desc
                        ) as recency
                    from {{ bounds }} as bounds
                    inner join {{ records }} as records
                        on records.run_id = bounds.run_id
                        and records.record_epoch <= bounds.start_epoch
                    where bounds.end_epoch > bounds.start_epoch
                ) as at_or_before_start
                where recency = 1
                union all
                -- the records that change it inside the interval
                select
                    {% for key in keys %}bounds.{{ key }},
                    {% endfor -%}
                    bounds.end_epoch,
                    records.record_epoch as at_epoch,
                    records.event_seq as point_seq,
                    records.stepping_share,
                    records.available_share
                from {{ bounds }} as bounds
                inner join {{ records }} as records
                    on records.run_id = bounds.run_id
                    and records.record_epoch > bounds.start_epoch
                    and records.record_epoch < bounds.end_epoch
            ) as points
        ) as timeline
        group by {{ keys | join(', ') }}
    ) as weighted
        on {% for key in keys %}weighted.{{ key }} = bounds.{{ key }}{{ " and " if not loop.last }}{% endfor %}
{%- endmacro %}
