A=(x y)
A=(${A[@]} ${A[@]})
A+=(${A[@]})
B=${A[@]}
for i in 1 2; do A+=z; done
python pretrain_gpt.py ${A[@]} ${B:-q}
