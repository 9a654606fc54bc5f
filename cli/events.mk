# fhook trace, record, replay, report
CLI_SRCS += cli/evcli.c cli/evglob.c cli/trace.c cli/record.c cli/rec_file.c cli/replay.c cli/report.c cli/report_tree.c \
	cli/view.c
# fhook info: what a recording is
CLI_SRCS += cli/info.c
