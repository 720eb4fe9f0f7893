view: fct_badput_breakdown {
  sql_table_name: `goodput.fct_badput_breakdown` ;;

  dimension: key {
    primary_key: yes
    hidden: yes
    sql: concat(${TABLE}.run_id, '/', ${TABLE}.gcm_badput_source) ;;
  }
  dimension: run_id {
    hidden: yes
    type: string
    sql: ${TABLE}.run_id ;;
  }
  dimension: project_id {
    type: string
    sql: ${TABLE}.project_id ;;
  }
  dimension: run_name {
    type: string
    sql: ${TABLE}.run_name ;;
  }
  dimension: badput_type {
    type: string
    sql: ${TABLE}.badput_type ;;
  }
  dimension: badput_source {
    description: "As the library labels it in Cloud Monitoring (CUSTOM_BADPUT_EVENTS.<TYPE> for custom events)."
    type: string
    sql: ${TABLE}.gcm_badput_source ;;
  }
  dimension: counts_against_goodput {
    type: yesno
    sql: ${TABLE}.counts_against_goodput ;;
  }
  measure: badput_seconds {
    type: sum
    sql: ${TABLE}.badput_seconds ;;
  }
  measure: counted_badput_seconds {
    description: "Every bucket but DATA_LOADING_ASYNC (it overlaps training)."
    type: sum
    sql: case when ${TABLE}.counts_against_goodput then ${TABLE}.badput_seconds else 0 end ;;
  }
}
