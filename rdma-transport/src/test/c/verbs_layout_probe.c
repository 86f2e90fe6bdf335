/*
 * Layout probe for the rdma-transport FFM bindings: prints sizeof / offsetof of every
 * struct and field the Java wrappers touch, one "name value" per line. Compiled with gcc
 * against the installed rdma-core headers by VerbsLayoutTest; it never calls a verb.
 */
#include <stddef.h>
#include <stdio.h>
#include <netinet/in.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#define SZ(t) printf("sizeof %s %zu\n", #t, sizeof(struct t))
#define SZU(t) printf("sizeof %s %zu\n", #t, sizeof(union t))
#define OFF(t, f) printf("offsetof %s.%s %zu\n", #t, #f, offsetof(struct t, f))

int main(void)
{
	SZ(ibv_context);
	OFF(ibv_context, device); OFF(ibv_context, ops); OFF(ibv_context, cmd_fd);
	OFF(ibv_context, async_fd); OFF(ibv_context, num_comp_vectors);
	SZ(ibv_context_ops);
	OFF(ibv_context_ops, poll_cq); OFF(ibv_context_ops, req_notify_cq);
	OFF(ibv_context_ops, post_srq_recv); OFF(ibv_context_ops, post_send); OFF(ibv_context_ops, post_recv);

	SZ(ibv_device_attr);
	OFF(ibv_device_attr, fw_ver); OFF(ibv_device_attr, max_mr_size); OFF(ibv_device_attr, max_qp);
	OFF(ibv_device_attr, max_qp_wr); OFF(ibv_device_attr, max_sge); OFF(ibv_device_attr, max_cq);
	OFF(ibv_device_attr, max_cqe); OFF(ibv_device_attr, max_mr); OFF(ibv_device_attr, max_pd);
	OFF(ibv_device_attr, max_qp_rd_atom); OFF(ibv_device_attr, max_qp_init_rd_atom);
	OFF(ibv_device_attr, max_ah); OFF(ibv_device_attr, max_mcast_grp);
	OFF(ibv_device_attr, max_total_mcast_qp_attach); OFF(ibv_device_attr, phys_port_cnt);

	SZ(ibv_port_attr);
	OFF(ibv_port_attr, state); OFF(ibv_port_attr, max_mtu); OFF(ibv_port_attr, active_mtu);
	OFF(ibv_port_attr, gid_tbl_len); OFF(ibv_port_attr, max_msg_sz); OFF(ibv_port_attr, lid);
	OFF(ibv_port_attr, link_layer);
	SZU(ibv_gid);

	SZ(ibv_pd); OFF(ibv_pd, context); OFF(ibv_pd, handle);
	SZ(ibv_mr);
	OFF(ibv_mr, context); OFF(ibv_mr, pd); OFF(ibv_mr, addr); OFF(ibv_mr, length);
	OFF(ibv_mr, handle); OFF(ibv_mr, lkey); OFF(ibv_mr, rkey);
	SZ(ibv_comp_channel); OFF(ibv_comp_channel, context); OFF(ibv_comp_channel, fd);
	SZ(ibv_cq); OFF(ibv_cq, context); OFF(ibv_cq, channel); OFF(ibv_cq, cqe);
	SZ(ibv_qp); OFF(ibv_qp, context); OFF(ibv_qp, qp_num); OFF(ibv_qp, state); OFF(ibv_qp, qp_type);

	SZ(ibv_qp_cap);
	OFF(ibv_qp_cap, max_send_wr); OFF(ibv_qp_cap, max_recv_wr); OFF(ibv_qp_cap, max_send_sge);
	OFF(ibv_qp_cap, max_recv_sge); OFF(ibv_qp_cap, max_inline_data);
	SZ(ibv_qp_init_attr);
	OFF(ibv_qp_init_attr, qp_context); OFF(ibv_qp_init_attr, send_cq); OFF(ibv_qp_init_attr, recv_cq);
	OFF(ibv_qp_init_attr, srq); OFF(ibv_qp_init_attr, cap); OFF(ibv_qp_init_attr, qp_type);
	OFF(ibv_qp_init_attr, sq_sig_all);
	SZ(ibv_qp_attr);
	OFF(ibv_qp_attr, qp_state); OFF(ibv_qp_attr, path_mtu); OFF(ibv_qp_attr, qkey);
	OFF(ibv_qp_attr, rq_psn); OFF(ibv_qp_attr, sq_psn); OFF(ibv_qp_attr, dest_qp_num);
	OFF(ibv_qp_attr, qp_access_flags); OFF(ibv_qp_attr, cap); OFF(ibv_qp_attr, ah_attr);
	OFF(ibv_qp_attr, pkey_index); OFF(ibv_qp_attr, max_rd_atomic); OFF(ibv_qp_attr, max_dest_rd_atomic);
	OFF(ibv_qp_attr, min_rnr_timer); OFF(ibv_qp_attr, port_num); OFF(ibv_qp_attr, timeout);
	OFF(ibv_qp_attr, retry_cnt); OFF(ibv_qp_attr, rnr_retry);
	SZ(ibv_ah_attr);
	OFF(ibv_ah_attr, grh); OFF(ibv_ah_attr, dlid); OFF(ibv_ah_attr, sl); OFF(ibv_ah_attr, src_path_bits);
	OFF(ibv_ah_attr, static_rate); OFF(ibv_ah_attr, is_global); OFF(ibv_ah_attr, port_num);
	SZ(ibv_global_route);
	OFF(ibv_global_route, dgid); OFF(ibv_global_route, flow_label); OFF(ibv_global_route, sgid_index);
	OFF(ibv_global_route, hop_limit); OFF(ibv_global_route, traffic_class);

	SZ(ibv_sge); OFF(ibv_sge, addr); OFF(ibv_sge, length); OFF(ibv_sge, lkey);
	SZ(ibv_send_wr);
	OFF(ibv_send_wr, wr_id); OFF(ibv_send_wr, next); OFF(ibv_send_wr, sg_list); OFF(ibv_send_wr, num_sge);
	OFF(ibv_send_wr, opcode); OFF(ibv_send_wr, send_flags); OFF(ibv_send_wr, imm_data);
	OFF(ibv_send_wr, wr.rdma.remote_addr); OFF(ibv_send_wr, wr.rdma.rkey);
	OFF(ibv_send_wr, wr.ud.ah); OFF(ibv_send_wr, wr.ud.remote_qpn); OFF(ibv_send_wr, wr.ud.remote_qkey);
	SZ(ibv_recv_wr);
	OFF(ibv_recv_wr, wr_id); OFF(ibv_recv_wr, next); OFF(ibv_recv_wr, sg_list); OFF(ibv_recv_wr, num_sge);
	SZ(ibv_wc);
	OFF(ibv_wc, wr_id); OFF(ibv_wc, status); OFF(ibv_wc, opcode); OFF(ibv_wc, vendor_err);
	OFF(ibv_wc, byte_len); OFF(ibv_wc, imm_data); OFF(ibv_wc, qp_num); OFF(ibv_wc, src_qp);
	OFF(ibv_wc, wc_flags); OFF(ibv_wc, pkey_index); OFF(ibv_wc, slid); OFF(ibv_wc, sl);
	OFF(ibv_wc, dlid_path_bits);

	SZ(rdma_event_channel); OFF(rdma_event_channel, fd);
	SZ(rdma_cm_id);
	OFF(rdma_cm_id, verbs); OFF(rdma_cm_id, channel); OFF(rdma_cm_id, context); OFF(rdma_cm_id, qp);
	OFF(rdma_cm_id, route); OFF(rdma_cm_id, ps); OFF(rdma_cm_id, port_num); OFF(rdma_cm_id, event);
	OFF(rdma_cm_id, send_cq_channel); OFF(rdma_cm_id, send_cq); OFF(rdma_cm_id, recv_cq_channel);
	OFF(rdma_cm_id, recv_cq); OFF(rdma_cm_id, srq); OFF(rdma_cm_id, pd); OFF(rdma_cm_id, qp_type);
	SZ(rdma_cm_event);
	OFF(rdma_cm_event, id); OFF(rdma_cm_event, listen_id); OFF(rdma_cm_event, event);
	OFF(rdma_cm_event, status); OFF(rdma_cm_event, param); OFF(rdma_cm_event, param.conn);
	OFF(rdma_cm_event, param.ud);
	SZ(rdma_conn_param);
	OFF(rdma_conn_param, private_data); OFF(rdma_conn_param, private_data_len);
	OFF(rdma_conn_param, responder_resources); OFF(rdma_conn_param, initiator_depth);
	OFF(rdma_conn_param, flow_control); OFF(rdma_conn_param, retry_count);
	OFF(rdma_conn_param, rnr_retry_count); OFF(rdma_conn_param, srq); OFF(rdma_conn_param, qp_num);
	SZ(rdma_ud_param);
	OFF(rdma_ud_param, private_data); OFF(rdma_ud_param, private_data_len); OFF(rdma_ud_param, ah_attr);
	OFF(rdma_ud_param, qp_num); OFF(rdma_ud_param, qkey);

	SZ(sockaddr_in); OFF(sockaddr_in, sin_family); OFF(sockaddr_in, sin_port); OFF(sockaddr_in, sin_addr);
	SZ(sockaddr_storage);
	return 0;
}
