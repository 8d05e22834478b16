A=xy
A="$A$A"
A="$A$A"
A="$A$A"
torchrun pretrain_gpt.py --num-layers 2 --hidden-size $A
