dpc.mesh @plan ["dp"=2]
func.func private @callee(%x: tensor<8x3xf32> {dpc.sharding = #dpc.sharding<@plan, [dp, *]>},
                          %w: tensor<3xf32> {dpc.param = "w"})
    -> (tensor<8x3xf32> {dpc.sharding = #dpc.sharding<@plan, [dp, *]>})
