# The scheduled cycle (load -> incremental build -> push) as a container, e.g. a Cloud Run job
# triggered by Cloud Scheduler every few minutes. See docs/operations.md#scheduling.
#
#   docker build -t goodput-refresh .
#   docker run -v /srv/goodput:/data goodput-refresh \
#       --from-logging --project my-proj --run llama3-70b \
#       --push-project my-proj --push-location us-central2 --push-accelerator-type v5p-128
#
# The warehouse lives in /data (GOODPUT_DUCKDB): mount a persistent volume there (on Cloud Run, a
# Filestore NFS volume; Cloud Storage FUSE lacks the file locks DuckDB and the refresh lock use).
FROM python:3.11-slim

WORKDIR /app
COPY pyproject.toml README.md dbt_project.yml profiles.yml ./
COPY goodput_loader ./goodput_loader
COPY models ./models
COPY macros ./macros
COPY seeds ./seeds
COPY analyses ./analyses
COPY tests/dbt ./tests/dbt
RUN pip install --no-cache-dir '.[monitoring]'

# The dbt project ships beside the package, not inside it: tell the loader where it is.
ENV GOODPUT_DBT_PROJECT_DIR=/app \
    GOODPUT_DUCKDB=/data/goodput.duckdb
ENTRYPOINT ["goodput-loader", "-v", "refresh"]
