# MQSim's workload files for the side by side (sourced by run_mqsim.sh and tpcc_mechanism.sh):
# one flow over the whole drive, MQSim's write cache on.
placement() {
cat <<XML
			<Priority_Class>HIGH</Priority_Class>
			<Device_Level_Data_Caching_Mode>WRITE_CACHE</Device_Level_Data_Caching_Mode>
			<Channel_IDs>0,1,2,3,4,5,6,7</Channel_IDs>
			<Chip_IDs>0,1,2,3</Chip_IDs>
			<Die_IDs>0,1</Die_IDs>
			<Plane_IDs>0,1</Plane_IDs>
XML
}

# The trace-based flow (open loop at the trace's own times) for trace file $1.
trace_flow() { # trace file
cat <<XML
<?xml version="1.0" encoding="us-ascii"?>
<MQSim_IO_Scenarios>
	<IO_Scenario>
		<IO_Flow_Parameter_Set_Trace_Based>
$(placement)
			<Initial_Occupancy_Percentage>70</Initial_Occupancy_Percentage>
			<File_Path>$1</File_Path>
			<Percentage_To_Be_Executed>100</Percentage_To_Be_Executed>
			<Relay_Count>1</Relay_Count>
			<Time_Unit>NANOSECOND</Time_Unit>
		</IO_Flow_Parameter_Set_Trace_Based>
	</IO_Scenario>
</MQSim_IO_Scenarios>
XML
}

# The synthetic flow: a closed queue of 4 KiB random requests over the first half of the
# logical space; read percentage $1, queue depth $2, $3 requests.
flow() { # read% qd requests
cat <<XML
<?xml version="1.0" encoding="us-ascii"?>
<MQSim_IO_Scenarios>
	<IO_Scenario>
		<IO_Flow_Parameter_Set_Synthetic>
$(placement)
			<Initial_Occupancy_Percentage>75</Initial_Occupancy_Percentage>
			<Working_Set_Percentage>50</Working_Set_Percentage>
			<Synthetic_Generator_Type>QUEUE_DEPTH</Synthetic_Generator_Type>
			<Read_Percentage>$1</Read_Percentage>
			<Address_Distribution>RANDOM_UNIFORM</Address_Distribution>
			<Percentage_of_Hot_Region>0</Percentage_of_Hot_Region>
			<Generated_Aligned_Addresses>true</Generated_Aligned_Addresses>
			<Address_Alignment_Unit>8</Address_Alignment_Unit>
			<Request_Size_Distribution>FIXED</Request_Size_Distribution>
			<Average_Request_Size>8</Average_Request_Size>
			<Variance_Request_Size>0</Variance_Request_Size>
			<Seed>798</Seed>
			<Average_No_of_Reqs_in_Queue>$2</Average_No_of_Reqs_in_Queue>
			<Intensity>32768</Intensity>
			<Stop_Time>0</Stop_Time>
			<Total_Requests_To_Generate>$3</Total_Requests_To_Generate>
		</IO_Flow_Parameter_Set_Synthetic>
	</IO_Scenario>
</MQSim_IO_Scenarios>
XML
}
